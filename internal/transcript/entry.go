package transcript

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
)

// entry is one line of a transcript, decoded only as far as this package
// needs. The CLI writes many more fields and entry types (attachments,
// queue operations, api-request records, cost-state, …); unknown ones are
// ignored, and a line that does not decode is skipped, never fatal.
type entry struct {
	Type string `json:"type"`
	// LeafUUID is the leaf a "last-prompt" entry names: a CLI writes one
	// when it exits, and a resume goes on from the last one named.
	LeafUUID    string `json:"leafUuid"`
	Subtype     string `json:"subtype"`
	UUID        string `json:"uuid"`
	SessionID   string `json:"sessionId"`
	Timestamp   string `json:"timestamp"`
	IsSidechain bool   `json:"isSidechain"`
	IsMeta      bool   `json:"isMeta"`
	// A compaction's summary, sent to the model as a user message.
	IsCompactSummary          bool `json:"isCompactSummary"`
	IsVisibleInTranscriptOnly bool `json:"isVisibleInTranscriptOnly"`
	IsAPIErrorMessage         bool `json:"isApiErrorMessage"`
	// Who started a turn: promptSource "typed"/"queued"/"sdk"/"system"…,
	// turnOrigin "human"/"sdk"/"task_notification"/"scheduled"….
	PromptSource string          `json:"promptSource"`
	TurnOrigin   string          `json:"turnOrigin"`
	TurnPosition json.RawMessage `json:"turnPosition"`
	// "cli" for an interactive terminal, "sdk-cli" for -p (print) mode.
	Entrypoint string   `json:"entrypoint"`
	CWD        string   `json:"cwd"`
	GitBranch  string   `json:"gitBranch"`
	Version    string   `json:"version"`
	Message    *message `json:"message"`

	// compact_boundary
	CompactMetadata *struct {
		Trigger string `json:"trigger"`
	} `json:"compactMetadata"`
	// cost-state: the CLI's running cost of the session, saved when a
	// process exits (and on /cost); it carries over --resume.
	TotalCostUSD *float64 `json:"totalCostUSD"`

	// The entry this one follows: a string, or null for the first entry
	// and a compaction's boundary, which names the entry it summarised in
	// LogicalParentUUID (line.go). Raw, so a hostile value only cuts the
	// line there instead of dropping the entry.
	ParentUUID        json.RawMessage `json:"parentUuid"`
	LogicalParentUUID string          `json:"logicalParentUuid"`
}

type message struct {
	ID         string          `json:"id"`
	Model      string          `json:"model"`
	Content    json.RawMessage `json:"content"`
	Usage      *usage          `json:"usage"`
	StopReason string          `json:"stop_reason"`
}

type usage struct {
	Input         int64 `json:"input_tokens"`
	Output        int64 `json:"output_tokens"`
	CacheRead     int64 `json:"cache_read_input_tokens"`
	CacheCreation int64 `json:"cache_creation_input_tokens"`
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Name      string          `json:"name"`
	ID        string          `json:"id"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
}

// decode parses one line; ok is false for anything that is not a JSON
// object of the expected field types.
func decode(line []byte) (e entry, ok bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return entry{}, false
	}
	if json.Unmarshal(line, &e) != nil {
		return entry{}, false
	}
	return e, true
}

func (e *entry) time() time.Time {
	t, err := time.Parse(time.RFC3339Nano, e.Timestamp)
	if err != nil {
		return time.Time{}
	}
	return t
}

// turnIndex is the CLI's own session-wide turn counter (turnPosition.turnIndex,
// 2.1.x), or 0. It counts every turn, automatic ones too.
func (e *entry) turnIndex() int {
	if len(e.TurnPosition) == 0 {
		return 0
	}
	var p struct {
		TurnIndex int `json:"turnIndex"`
	}
	if json.Unmarshal(e.TurnPosition, &p) != nil || p.TurnIndex < 0 {
		return 0
	}
	return p.TurnIndex
}

// blocks returns a message's content as blocks: a plain string becomes one
// text block; content of any other shape gives none.
func (m *message) blocks() []block {
	if m == nil || len(m.Content) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return []block{{Type: "text", Text: s}}
	}
	var bs []block
	if json.Unmarshal(m.Content, &bs) != nil {
		return nil
	}
	return bs
}

// Kind says what a person did in a user entry that starts a turn.
type Kind string

// The kinds of turn a person can start.
const (
	// KindPrompt is a prompt: typed at the terminal (also queued while
	// Claude was busy) or sent by a -p caller such as untether.
	KindPrompt Kind = "prompt"
	// KindBash is a terminal's "! command" (bash mode); the model is shown
	// its output and answers, so it is a turn too.
	KindBash Kind = "bash"
	// KindCommand is a slash command run at the terminal (/compact, …). It
	// is not counted as a turn.
	KindCommand Kind = "command"
)

// personOrigins are the turnOrigin values of turns a person (or a -p
// caller) started; the CLI's others are "scheduled", "task_notification",
// "auto_continuation", "peer", "host_synthetic", "system" and "unknown".
var personOrigins = map[string]bool{"human": true, "sdk": true}

// personSources are the promptSource values of prompts a person sent
// ("system" is the CLI's own, e.g. a task notification).
var personSources = map[string]bool{"typed": true, "queued": true, "suggestion_accepted": true, "sdk": true}

// cliWrapped are prefixes of user entries the CLI writes itself: a slash
// command's output and caveat, a bash-mode command's output, an interrupt
// marker, a background task's notification, an old-style caveat.
var cliWrapped = []string{
	"<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>",
	"<bash-stdout>", "<bash-stderr>", "[Request interrupted by user",
	"<task-notification>", "<user-prompt-submit-hook>",
	"Caveat: The messages below were generated by the user while running local commands",
}

// personal classifies a user entry: whether a person started something with
// it, what, and the words as the person typed them ("/compact args",
// "! ls", or the prompt's text with images as "[image]").
func (e *entry) personal() (Kind, string, bool) {
	if e.Type != "user" || e.Message == nil || e.IsMeta || e.IsSidechain ||
		e.IsCompactSummary || e.IsVisibleInTranscriptOnly {
		return "", "", false
	}
	var parts []string
	for _, b := range e.Message.blocks() {
		switch b.Type {
		case "tool_result":
			return "", "", false
		case "text":
			parts = append(parts, b.Text)
		case "image":
			parts = append(parts, "[image]")
		case "document":
			parts = append(parts, "[document]")
		}
	}
	text := strings.TrimSpace(strings.Join(parts, "\n"))
	if text == "" {
		return "", "", false
	}
	// The CLI marks who started a turn (2.1.x); without marks (older CLIs,
	// bash-mode input) only the text can tell.
	switch {
	case e.TurnOrigin != "":
		if !personOrigins[e.TurnOrigin] {
			return "", "", false
		}
	case e.PromptSource != "":
		if !personSources[e.PromptSource] {
			return "", "", false
		}
	}
	// A slash command is written as <command-name>/x</command-name>
	// <command-message>…</command-message><command-args>…</command-args>
	// (older CLIs put command-message first).
	if strings.HasPrefix(text, "<command-") {
		if name := inner(text, "command-name"); name != "" {
			if args := inner(text, "command-args"); args != "" {
				name += " " + args
			}
			return KindCommand, name, true
		}
	}
	if strings.HasPrefix(text, "<bash-input>") {
		return KindBash, "! " + inner(text, "bash-input"), true
	}
	for _, p := range cliWrapped {
		if strings.HasPrefix(text, p) {
			return "", "", false
		}
	}
	return KindPrompt, text, true
}

// inner returns the trimmed text of the first <tag>…</tag> in text, or "".
func inner(text, tag string) string {
	open, end := "<"+tag+">", "</"+tag+">"
	i := strings.Index(text, open)
	if i < 0 {
		return ""
	}
	rest := text[i+len(open):]
	j := strings.Index(rest, end)
	if j < 0 {
		return ""
	}
	return strings.TrimSpace(rest[:j])
}
