package runner

import (
	"encoding/json"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
)

// serverToolScript answers SEARCH with a web search the API ran itself and
// SEARCHFAIL with one that failed, each followed by a text answer.
func serverToolScript() fakeapi.Script {
	search := func(id string, result string, answer string) []fakeapi.Block {
		return []fakeapi.Block{
			{Type: fakeapi.BlockServerToolUse, ID: id, Name: "web_search", Input: json.RawMessage(`{"query":"go 1.26 release notes"}`)},
			{Type: fakeapi.BlockRaw, Raw: json.RawMessage(`{"type":"web_search_tool_result","tool_use_id":"` + id + `","content":` + result + `}`)},
			fakeapi.TextBlock(answer),
		}
	}
	return fakeapi.Script{Rules: []fakeapi.Rule{
		{Name: "searchfail", When: fakeapi.Match{PromptContains: "SEARCHFAIL"}, Replies: []fakeapi.Reply{{Content: search("srvtoolu_02",
			`{"type":"web_search_tool_result_error","error_code":"max_uses_exceeded"}`, "The search failed.")}}},
		{Name: "search", When: fakeapi.Match{PromptContains: "SEARCH"}, Replies: []fakeapi.Reply{{Content: search("srvtoolu_01",
			`[{"type":"web_search_result","title":"Go 1.26 Release Notes","url":"https://go.dev/doc/go1.26","encrypted_content":"x","page_age":"1 day"},`+
				`{"type":"web_search_result","title":"Go blog","url":"https://go.dev/blog","encrypted_content":"y"}]`, "Found it.")}}},
	}}
}

// TestRealCLIServerTools: the real CLI forwards a server tool's use and
// its result block; the translator gives them one readable row that ends
// as a success, or as a failure when the API says the tool failed.
func TestRealCLIServerTools(t *testing.T) {
	env := claudetest.New(t, serverToolScript())
	s, log := startSession(t, Config{Binary: env.Binary, Workdir: env.Workdir, Env: env.Vars,
		InheritEnv: []string{"PATH=/usr/bin:/bin"}, Logger: zerolog.New(zerolog.NewTestWriter(t))})
	send(t, s, "SEARCH for it")
	_, i := log.waitFor(t, 0, "the answer", answerIs("Found it."))
	started, finished := serverToolEvents(log.snapshot()[:i+1], "srvtoolu_01")
	require.NotNil(t, started, "the server tool's use is an event")
	assert.True(t, started.Server)
	assert.Equal(t, "go 1.26 release notes", started.Summary)
	require.NotNil(t, finished, "its result block ends it")
	assert.True(t, finished.OK)
	assert.Equal(t, "2 results: Go 1.26 Release Notes (go.dev), Go blog (go.dev)", finished.Preview)

	send(t, s, "SEARCHFAIL now")
	_, j := log.waitFor(t, i+1, "the failed search's answer", answerIs("The search failed."))
	_, failed := serverToolEvents(log.snapshot()[:j+1], "srvtoolu_02")
	require.NotNil(t, failed)
	assert.False(t, failed.OK, "a failed server tool is not a success")
	assert.Equal(t, "error: max_uses_exceeded", failed.Preview)
	for _, ev := range log.snapshot()[:j+1] {
		if u, ok := ev.(Unknown); ok {
			t.Errorf("an unknown event: %s", u.Kind)
		}
	}
}

func serverToolEvents(evs []Event, id ToolUseID) (*ToolStarted, *ToolFinished) {
	var st *ToolStarted
	var fin *ToolFinished
	for _, ev := range evs {
		switch e := ev.(type) {
		case ToolStarted:
			if e.ID == id {
				st = &e
			}
		case ToolFinished:
			if e.ID == id {
				fin = &e
			}
		}
	}
	return st, fin
}
