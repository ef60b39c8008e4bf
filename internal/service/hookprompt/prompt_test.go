package hookprompt

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// body is a GitHub-shaped payload with the awkward cases: a null member, a
// null element, a large id, markup, a string where an object could be.
const body = `{
  "action": "completed",
  "id": 30433642,
  "big": 12345678901234567890,
  "workflow_run": {"name": "CI", "conclusion": "failure", "html_url": "https://github.com/o/r/actions/runs/1",
    "head_commit": {"message": "fix <b>\"quotes\"</b> & more"}, "pull_requests": []},
  "issue": {"title": "Crash", "milestone": null, "labels": [{"name": "bug"}, null, {"name": "p1"}], "body": ""},
  "sender": "octocat",
  "flag": false,
  "count": 0
}`

func TestRender(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"field chain", "{{.workflow_run.name}} {{.workflow_run.conclusion}}", "CI failure"},
		{"number as sent", "{{.id}} {{.big}}", "30433642 12345678901234567890"},
		{"missing key", "[{{.nope}}]", "[]"},
		{"missing chain", "[{{.nope.deeper.still}}]", "[]"},
		{"null member", "[{{.issue.milestone}}][{{.issue.milestone.title}}]", "[][]"},
		{"field of a string", "[{{.sender.login}}]", "[]"},
		{"field of an array", "[{{.issue.labels.name}}]", "[]"},
		{"markup kept", "{{.workflow_run.head_commit.message}}", `fix <b>"quotes"</b> & more`},
		{"object as JSON", "{{.workflow_run.head_commit}}", `{"message":"fix <b>\"quotes\"</b> & more"}`},
		{"empty array as JSON", "{{.workflow_run.pull_requests}}", `[]`},
		{"bool", "{{.flag}}", "false"},
		{"range with null element", "{{range .issue.labels}}({{.name}}){{end}}", "(bug)()(p1)"},
		{"range over missing", "{{range .nope}}x{{else}}none{{end}}", "none"},
		{"if missing", "{{if .nope}}yes{{else}}no{{end}}", "no"},
		{"if null", "{{if .issue.milestone}}yes{{else}}no{{end}}", "no"},
		{"eq on missing", `{{if eq .nope "x"}}yes{{else}}no{{end}}`, "no"},
		{"eq on string", `{{if eq .action "completed"}}yes{{end}}`, "yes"},
		{"with", "{{with .workflow_run}}{{.name}}{{end}}", "CI"},
		{"with missing", "{{with .nope}}{{.name}}{{else}}-{{end}}", "-"},
		{"variable chain", "{{$r := .workflow_run}}{{$r.name}}/{{$r.nope.x}}", "CI/"},
		{"parenthesised chain", "{{(.workflow_run).name}}", "CI"},
		{"root", "{{.flag}}{{with .sender}}{{.}}{{end}}", "falseoctocat"},
		{"default on missing", `{{default "none" .nope}}`, "none"},
		{"default on empty", `{{default "none" .issue.body}}|{{default "n" .count}}|{{default "n" .flag}}`, "none|n|n"},
		{"default keeps value", `{{.action | default "none"}}`, "completed"},
		{"truncate", `{{truncate 4 .workflow_run.head_commit.message}}`, "fix …"},
		{"truncate short", `{{truncate 40 .action}}`, "completed"},
		{"truncate missing", `[{{truncate 4 .nope}}]`, "[]"},
		{"truncate runes", `{{truncate 2 "héllo"}}`, "hé…"},
		{"json", `{{json .issue.labels}}|{{json .action}}|[{{json .nope}}]`, `[{"name":"bug"},null,{"name":"p1"}]|"completed"|[]`},
		{"lower upper trim", `{{upper .action}} {{lower "ABC"}} [{{trim "  x  "}}]`, "COMPLETED abc [x]"},
		{"index", `{{index .issue.labels 2 "name"}}|{{index .issue.labels 9 "name"}}|{{index .nope "a"}}|{{index . "action"}}`, "p1|||completed"},
		{"printf", `{{printf "%s#%s" .action .id}}`, "completed#30433642"},
		{"len", `{{len .issue.labels}} {{len .action}} {{len .nope}} {{len .id}} {{len "héllo"}}`, "3 9 0 0 5"},
		{"slice", `{{slice .action 0 4}}|{{slice .action 5}}|{{slice .action 3 99}}|[{{slice .nope 0 7}}]|{{slice .issue.labels 2}}`, `comp|eted|pleted|[]|[{"name":"p1"}]`},
		{"eq number", `{{if eq .id 30433642}}y{{end}}{{if eq .count 0}}y{{end}}{{if ne .id 1}}y{{end}}`, "yyy"},
		{"eq several", `{{if eq .action "opened" "completed"}}y{{end}}`, "y"},
		{"eq on object", `{{if eq .workflow_run "x"}}y{{else}}n{{end}}`, "n"},
		{"order", `{{if lt .count 1}}a{{end}}{{if gt .id 9}}b{{end}}{{if le "a" "b"}}c{{end}}{{if ge .nope 0}}d{{end}}`, "abc"},
		{"range over a string", `[{{range .sender}}x{{end}}]`, "[]"},
		{"range over a count", `{{range 3}}x{{end}}`, "xxx"},
		{"range with index", `{{range $i, $l := .issue.labels}}{{$i}}={{$l.name}};{{end}}`, "0=bug;1=;2=p1;"},
		{"declaration prints nothing", `{{$x := .action}}.`, "."},
	}
	d, err := Decode([]byte(body))
	require.NoError(t, err)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(tc.name, tc.src)
			require.NoError(t, err)
			got, truncated, err := p.Render(d, 1<<16)
			require.NoError(t, err)
			assert.False(t, truncated)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestRenderAnyBody: the same template over bodies of every shape renders
// without an error.
func TestRenderAnyBody(t *testing.T) {
	p, err := Parse("t", `{{.a.b}}{{range .a}}{{.c}}{{end}}{{index .a 0}}{{json .}}{{truncate 3 .a}}{{upper .a.b}}`)
	require.NoError(t, err)
	for _, b := range []string{`null`, `{}`, `[]`, `"s"`, `1`, `true`, `{"a":null}`, `{"a":[null,1,{"c":null}]}`,
		`{"a":{"b":{"c":1}}}`, `{"a":"str"}`, `[{"a":1}]`, `{"a":[[[]]]}`} {
		d, err := Decode([]byte(b))
		require.NoError(t, err, b)
		_, _, err = p.Render(d, 1<<10)
		assert.NoError(t, err, b)
	}
}

func TestDecodeRefuses(t *testing.T) {
	for _, b := range []string{``, `{`, `{"a":1} {"b":2}`, `payload=%7B%7D`} {
		_, err := Decode([]byte(b))
		assert.Error(t, err, b)
	}
}

func TestRenderCap(t *testing.T) {
	d, err := Decode([]byte(`{"s":"` + strings.Repeat("é", 100) + `"}`))
	require.NoError(t, err)
	p, err := Parse("t", "ab{{.s}}{{.s}}")
	require.NoError(t, err)
	got, truncated, err := p.Render(d, 11) // 2 bytes, then 4½ two-byte characters
	require.NoError(t, err)
	assert.True(t, truncated)
	assert.Equal(t, "abéééé", got, "cut at a character boundary")

	got, truncated, err = p.Render(d, 1<<10)
	require.NoError(t, err)
	assert.False(t, truncated)
	assert.Equal(t, "ab"+strings.Repeat("é", 200), got)
}

// TestRenderBoundsALoop: a template that loops over the body stops at the
// cap rather than growing without end.
func TestRenderBoundsALoop(t *testing.T) {
	d, err := Decode([]byte(`{"a":[` + strings.Repeat(`1,`, 999) + `1]}`))
	require.NoError(t, err)
	p, err := Parse("t", "{{range .a}}{{range $.a}}xx{{end}}{{end}}")
	require.NoError(t, err)
	got, truncated, err := p.Render(d, 100)
	require.NoError(t, err)
	assert.True(t, truncated)
	assert.Len(t, got, 100)
}

func TestParseRefuses(t *testing.T) {
	for name, src := range map[string]string{
		"unclosed":        "{{.a",
		"unknown func":    "{{nosuch .a}}",
		"field with args": `{{.a "x"}}`,
		"bad truncate":    `{{truncate "x" .a}}`,
		"undefined var":   `{{$x}}`,
		"template call":   `{{template "nope"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("t", src)
			assert.Error(t, err)
		})
	}
}

// FuzzRender: no body makes a template that uses every lenient path fail.
func FuzzRender(f *testing.F) {
	for _, b := range []string{body, `null`, `{"a":{"b":[1,"x",null,{"c":true}]}}`, `[[[{}]]]`, `{"a":"é"}`} {
		f.Add([]byte(b))
	}
	p, err := Parse("f", `{{.a.b.c}}{{range .a}}{{.b}}{{range .}}{{.}}{{end}}{{end}}{{range $k, $v := .}}{{$k}}{{$v.a}}{{end}}`+
		`{{index .a "b" 0}}{{slice .a 1 3}}{{len .a}}{{if eq .a .b}}={{end}}{{if lt .a 3}}<{{end}}{{json .}}`+
		`{{truncate 5 .a}}{{default "d" .a.b}}{{upper .a}}{{printf "%v" .a}}{{with .a}}{{.x.y}}{{end}}`)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Decode(b)
		if err != nil {
			return
		}
		if _, _, err := p.Render(d, 1<<12); err != nil {
			t.Fatalf("body %q: %v", b, err)
		}
	})
}
