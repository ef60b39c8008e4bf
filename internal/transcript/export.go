package transcript

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ExportOptions adjusts Export.
type ExportOptions struct {
	// Location is the time zone times are shown in; UTC when nil.
	Location *time.Location
	// MaxBytes bounds how much is read: a longer transcript is exported
	// from its last MaxBytes, and the document says so. 0 (and anything
	// above) means 64 MiB.
	MaxBytes int64
}

// toolChars bounds a tool call's one-line summary, in runes.
const toolChars = 120

// Export renders the transcript at path as a Markdown document: a header
// (directory, branch, time span, turns, models, token usage, the CLI's
// recorded cost), then each turn: what the person typed (quoted), slash
// and bash-mode commands, automatic turns (task notifications, …) by a
// one-line note, and Claude's answer — its text as written, each tool call
// as one line (tool name and its most telling input; "failed" when its
// result was an error), tool results and thinking left out — closed by
// the turn's API calls and tokens. The output depends only on the file's
// bytes and opts. Entries are shown in file order; subagent (sidechain)
// entries and the CLI's bookkeeping are left out.
func Export(path string, opts ExportOptions) (string, error) {
	f, st, err := open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	budget := opts.MaxBytes
	if budget <= 0 || budget > maxScan {
		budget = maxScan
	}
	size := st.Size()
	from := max(size-budget, 0)
	x := exporter{tools: map[string]place{}}
	sp, err := scan(f, from, size, 0, true, func(_ int64, line []byte) error {
		if e, ok := decode(line); ok {
			x.add(&e)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("export transcript: %w", err)
	}
	loc := opts.Location
	if loc == nil {
		loc = time.UTC
	}
	id := x.about.session
	if id == "" {
		id = strings.TrimSuffix(filepath.Base(path), ".jsonl")
	}
	return x.render(id, loc, from, sp.skipped), nil
}

// para is one paragraph of a section; consecutive tool lines form one list.
type para struct {
	text   string
	tool   bool
	failed bool
}

type section struct {
	who    string // "You", "Background task", …; "" for Claude alone
	at     time.Time
	person []para
	claude []para
	calls  int
	usage  usage
}

// place is where a tool call's line is: sections[section].claude[para].
type place struct{ section, para int }

type exporter struct {
	sections     []*section
	tools        map[string]place
	lastMsg      string
	about        about
	models       []string
	turns, calls int
	total        usage
	cost         *float64
}

func (x *exporter) cur() *section {
	if len(x.sections) == 0 {
		x.sections = append(x.sections, &section{})
	}
	return x.sections[len(x.sections)-1]
}

func (x *exporter) open(who string, at time.Time, body para) {
	x.sections = append(x.sections, &section{who: who, at: at, person: []para{body}})
}

func (x *exporter) add(e *entry) {
	if e.Type == "cost-state" && e.TotalCostUSD != nil {
		x.cost = e.TotalCostUSD
		return
	}
	if e.IsSidechain || (e.Type != "user" && e.Type != "assistant" && e.Type != "system") {
		return
	}
	x.about.note(e)
	switch e.Type {
	case "system":
		if e.Subtype == "compact_boundary" {
			how := ""
			if e.CompactMetadata != nil && e.CompactMetadata.Trigger != "" {
				how = " (" + e.CompactMetadata.Trigger + ")"
			}
			x.open("", e.time(), para{text: "*Conversation compacted" + how + ".*"})
		}
	case "user":
		x.user(e)
	case "assistant":
		x.assistant(e)
	}
}

func (x *exporter) user(e *entry) {
	if kind, text, ok := e.personal(); ok {
		switch kind {
		case KindPrompt:
			x.turns++
			x.open("You", e.time(), para{text: quote(text)})
		case KindBash:
			x.turns++
			x.open("You", e.time(), para{text: code(text)})
		case KindCommand:
			x.open("You", e.time(), para{text: code(text)})
		}
		return
	}
	if e.Message == nil || e.IsMeta || e.IsCompactSummary {
		return
	}
	blocks := e.Message.blocks()
	for _, b := range blocks {
		if b.Type == "tool_result" && b.IsError {
			if at, ok := x.tools[b.ToolUseID]; ok {
				x.sections[at.section].claude[at.para].failed = true
			}
		}
	}
	if len(blocks) == 1 && blocks[0].Type == "text" {
		text := strings.TrimSpace(blocks[0].Text)
		switch {
		case strings.HasPrefix(text, "[Request interrupted by user"):
			s := x.cur()
			s.claude = append(s.claude, para{text: "*Interrupted.*"})
		case e.TurnOrigin != "" && !personOrigins[e.TurnOrigin]:
			x.open(autoName(e.TurnOrigin), e.time(), para{text: "*" + clip(autoSummary(text), maxText) + "*"})
		}
	}
}

func (x *exporter) assistant(e *entry) {
	if e.Message == nil {
		return
	}
	s := x.cur()
	// The CLI writes each content block of a message as its own entry,
	// each with the whole message's usage: count a message once. Only the
	// previous message is compared, as ids need not be unique across a
	// whole file (a restarted fake API, or a proxy, reuses them).
	if id := e.Message.ID; id == "" || id != x.lastMsg {
		x.lastMsg = id
		if u := e.Message.Usage; u != nil && !e.IsAPIErrorMessage {
			s.calls++
			s.usage.addUsage(u)
			x.calls++
			x.total.addUsage(u)
		}
		if m := e.Message.Model; m != "" && m != "<synthetic>" && !slices.Contains(x.models, m) {
			x.models = append(x.models, m)
		}
	}
	for _, b := range e.Message.blocks() {
		switch b.Type {
		case "text":
			text := strings.TrimSpace(b.Text)
			if text == "" {
				continue
			}
			if e.IsAPIErrorMessage {
				text = "*" + clip(text, maxText) + "*"
			}
			s.claude = append(s.claude, para{text: text})
		case "tool_use":
			line := "**" + toolName(b.Name) + "**"
			if sum := toolSummary(b.Name, b.Input, toolChars); sum != "" {
				line += " " + code(sum)
			}
			s.claude = append(s.claude, para{text: line, tool: true})
			if b.ID != "" {
				x.tools[b.ID] = place{len(x.sections) - 1, len(s.claude) - 1}
			}
		}
	}
}

func (u *usage) addUsage(o *usage) {
	u.Input += o.Input
	u.Output += o.Output
	u.CacheRead += o.CacheRead
	u.CacheCreation += o.CacheCreation
}

func autoName(origin string) string {
	switch origin {
	case "task_notification":
		return "Background task"
	case "scheduled":
		return "Scheduled prompt"
	default:
		return "Automatic turn (" + origin + ")"
	}
}

// autoSummary is the <summary> of a task notification, else its text.
func autoSummary(text string) string {
	if s := inner(text, "summary"); s != "" {
		return s
	}
	return text
}
