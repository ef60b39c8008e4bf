package transcript

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSinceTerminalTurns is issue 26 §3 on real data: a session untether
// (stream-json) ran, then resumed at an interactive terminal where a person
// typed prompts, ran /compact and a bash-mode command, queued a prompt and
// interrupted one. Since, from the mark taken when untether's CLI was done,
// sees exactly the person's 7 turns, the command and the compaction.
func TestSinceTerminalTurns(t *testing.T) {
	before, after := fixture(t, "sdk-before-terminal.jsonl"), fixture(t, "sdk-then-terminal.jsonl")
	require.True(t, strings.HasPrefix(after, before), "the terminal appended to untether's file")
	p := filepath.Join(t.TempDir(), "741f4ad2-102a-49d9-bd7d-a37b8e4e9cc4.jsonl")
	writeFile(t, p, before)
	m, err := Stamp(p)
	require.NoError(t, err)
	assert.Equal(t, int64(len(before)), m.Size)
	assert.Equal(t, "f882404c-fb23-48b6-9b62-4d9acd355672", m.UUID, "the last entry with a uuid: untether's last answer")

	appendFile(t, p, after[len(before):])
	d, next, err := Since(p, m)
	require.NoError(t, err)
	assert.Equal(t, []string{"typed at the terminal after resume", "a second typed turn", "! ls", "after compact", "slow one", "queued msg", "slow two"}, texts(d.Turns))
	assert.Equal(t, 7, d.Count)
	assert.Equal(t, []string{"/compact"}, d.Commands)
	assert.True(t, d.Compacted)
	assert.True(t, d.Extended())
	assert.False(t, d.Rewritten || d.Lost || d.Partial)
	for _, tu := range d.Turns {
		assert.Equal(t, EntrypointTerminal, tu.Entrypoint, tu.Text)
		assert.False(t, tu.Time.IsZero())
	}
	assert.Equal(t, KindBash, d.Turns[2].Kind)
	assert.Equal(t, int64(len(after)), next.Size)

	d, again, err := Since(p, next)
	require.NoError(t, err)
	assert.False(t, d.Extended(), "nothing new since the new mark")
	assert.Equal(t, next, again)
}

// TestSinceOwnTurns: what untether's own CLI writes after the result of a
// turn (bookkeeping without uuids) is no extension, and a turn a -p caller
// sends is counted with its uuid (untether's own uuids are recorded as sent,
// so it can tell its prompts from a terminal's `claude -p`).
func TestSinceOwnTurns(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, p, sdkPrompt(t, "11111111-2222-4333-8444-555555555555", "from the phone")+answer(t, "a1", "hi"))
	m, err := Stamp(p)
	require.NoError(t, err)
	appendFile(t, p, bookkeeping(t))
	d, m, err := Since(p, m)
	require.NoError(t, err)
	assert.False(t, d.Extended(), "%+v", d)

	appendFile(t, p, sdkPrompt(t, "p2", "claude -p at the terminal")+answer(t, "a2", "ok")+toolResult(t, "r2"))
	d, _, err = Since(p, m)
	require.NoError(t, err)
	require.Len(t, d.Turns, 1)
	assert.Equal(t, Turn{UUID: "p2", Time: d.Turns[0].Time, Kind: KindPrompt, Text: "claude -p at the terminal", Entrypoint: EntrypointPrint}, d.Turns[0])
	assert.Equal(t, 3, d.Entries, "prompt, answer, tool result")
}

// TestSincePartialLine: a line the CLI is still writing is not read until
// it is whole, and then counted once.
func TestSincePartialLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, p, sdkPrompt(t, "p1", "one")+answer(t, "a1", "x"))
	m, err := Stamp(p)
	require.NoError(t, err)
	line := typed(t, "p2", "two")
	appendFile(t, p, line[:20])
	d, m2, err := Since(p, m)
	require.NoError(t, err)
	assert.Zero(t, d.Count)
	assert.Equal(t, m.Size, m2.Size, "the partial line is not consumed")

	appendFile(t, p, line[20:])
	d, _, err = Since(p, m2)
	require.NoError(t, err)
	assert.Equal(t, []string{"two"}, texts(d.Turns))
}

// TestSinceHostile: malformed lines, unknown entry types, wrong field types
// and a huge line are skipped, never fatal; the huge one still counts as an
// extension, since what it was cannot be told.
func TestSinceHostile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, p, sdkPrompt(t, "p1", "one"))
	m, err := Stamp(p)
	require.NoError(t, err)
	appendFile(t, p, "not json\n{\"type\":\"user\",\"uuid\":\"x\",\"isMeta\":\"yes\"}\n[1,2]\n{}\n"+
		`{"type":"brand-new-type","uuid":"n1","payload":{"deep":[1,2,3]}}`+"\n"+
		`{"type":"user","uuid":"m1","isMeta":true,"message":{"content":"<local-command-caveat>x</local-command-caveat>"}}`+"\n"+
		`{"type":"user","uuid":"c1","isCompactSummary":true,"message":{"content":"This session is being continued"}}`+"\n"+
		`{"type":"user","uuid":"t1","promptSource":"system","turnOrigin":"task_notification","message":{"content":"<task-notification>done</task-notification>"}}`+"\n"+
		`{"type":"user","uuid":"i1","message":{"content":[{"type":"text","text":"[Request interrupted by user]"}]}}`+"\n"+
		// A tool result with text beside it, a meta entry of plain text
		// (a skill's expansion), a scheduled prompt: none a person's turn.
		`{"type":"user","uuid":"r1","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"ok"},{"type":"text","text":"beside the result"}]}}`+"\n"+
		`{"type":"user","uuid":"k1","isMeta":true,"message":{"content":"Base directory for this skill: /x"}}`+"\n"+
		`{"type":"user","uuid":"s1","promptSource":"typed","turnOrigin":"scheduled","message":{"content":"check the build"}}`+"\n"+
		`{"type":"user","uuid":"q1","isSidechain":true,"message":{"content":"a subagent's prompt"}}`+"\n")
	d, m, err := Since(p, m)
	require.NoError(t, err)
	assert.Zero(t, d.Count, "%v", texts(d.Turns))
	assert.Equal(t, 8, d.Entries, "the decodable entries with a uuid, not the sidechain's")

	appendFile(t, p, `{"type":"user","uuid":"big","message":{"content":"`+strings.Repeat("x", maxLine)+`"}}`+"\n")
	d, _, err = Since(p, m)
	require.NoError(t, err)
	assert.Equal(t, 1, d.Skipped)
	assert.True(t, d.Extended())
}

// TestSinceRewritten: a file replaced, truncated or rewritten is never read
// from the old offset as if it had grown.
func TestSinceRewritten(t *testing.T) {
	base := sdkPrompt(t, "p1", "one") + answer(t, "a1", "x")
	more := typed(t, "p2", "two") + answer(t, "a2", "y")
	tests := []struct {
		name      string
		rewrite   string
		turns     []string
		lost      bool
		sameInode bool
	}{
		// The CLI can replace a transcript: the marked entry is found again.
		{name: "replaced with the same start", rewrite: base + more, turns: []string{"two"}},
		{name: "rewritten in place, entries moved", rewrite: `{"type":"mode","mode":"normal"}` + "\n" + base + more, turns: []string{"two"}, sameInode: true},
		{name: "marked entry gone", rewrite: typed(t, "p9", "other") + answer(t, "a9", "z") + typed(t, "p8", "other 2") + answer(t, "a8", "w"), lost: true},
		{name: "truncated", rewrite: base[:10], lost: true, sameInode: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "s.jsonl")
			writeFile(t, p, base)
			m, err := Stamp(p)
			require.NoError(t, err)
			if tt.sameInode {
				require.NoError(t, os.WriteFile(p, []byte(tt.rewrite), 0o600))
			} else {
				tmp := p + ".new"
				writeFile(t, tmp, tt.rewrite)
				require.NoError(t, os.Rename(tmp, p))
			}
			d, next, err := Since(p, m)
			require.NoError(t, err)
			assert.True(t, d.Rewritten)
			assert.True(t, d.Extended())
			assert.Equal(t, tt.lost, d.Lost)
			assert.Equal(t, tt.turns, texts(d.Turns))
			fresh, err := Stamp(p)
			require.NoError(t, err)
			assert.Equal(t, fresh, next, "the next mark is the file as it is now")
		})
	}
}

// TestMarkJSON: a Mark survives a restart as JSON.
func TestMarkJSON(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, p, sdkPrompt(t, "p1", "one"))
	m, err := Stamp(p)
	require.NoError(t, err)
	b, err := json.Marshal(m)
	require.NoError(t, err)
	var back Mark
	require.NoError(t, json.Unmarshal(b, &back))
	d, _, err := Since(p, back)
	require.NoError(t, err)
	assert.False(t, d.Extended(), "an unmarshalled mark still matches: %s", b)
}

// TestSinceZeroMark counts everything.
func TestSinceZeroMark(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, p, fixture(t, "interactive.jsonl"))
	d, _, err := Since(p, Mark{})
	require.NoError(t, err)
	assert.Equal(t, []string{"hello from the terminal", "please run it"}, texts(d.Turns))
}

// TestStampFarUUID: when the tail is all bookkeeping (or one long line
// without a uuid), Stamp reads further back for the last entry with one,
// so a later rewrite can still be told from growth.
func TestStampFarUUID(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	filler := `{"type":"api-request-shape","shape":"` + strings.Repeat("s", 300<<10) + `"}` + "\n"
	writeFile(t, p, sdkPrompt(t, "p1", "one")+answer(t, "a1", "x")+filler)
	m, err := Stamp(p)
	require.NoError(t, err)
	assert.Equal(t, "a1", m.UUID)
	assert.Equal(t, int64(len(sdkPrompt(t, "p1", "one"))), m.UUIDAt)
}

// TestForeign: a caller's own turns (by uuid) are set apart; turns without
// a uuid are never the caller's; past the turns kept, the count assumes
// the rest foreign.
func TestForeign(t *testing.T) {
	d := Delta{Count: 4, Turns: []Turn{{UUID: "mine", Text: "a"}, {UUID: "theirs", Text: "b"}, {Text: "c"}, {UUID: "mine2", Text: "d"}}}
	own := func(u string) bool { return u == "mine" || u == "mine2" || u == "" }
	turns, n := d.Foreign(own)
	assert.Equal(t, []string{"b", "c"}, texts(turns))
	assert.Equal(t, 2, n)

	turns, n = d.Foreign(func(string) bool { return false })
	assert.Equal(t, d.Turns, turns)
	assert.Equal(t, 4, n)

	d.Count = 150 // only 4 kept
	_, n = d.Foreign(own)
	assert.Equal(t, 148, n)

	turns, n = Delta{}.Foreign(own)
	assert.Empty(t, turns)
	assert.Zero(t, n)
}
