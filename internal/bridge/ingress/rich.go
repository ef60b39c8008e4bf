package ingress

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// A rich message (Bot API 10.1, Message.rich_message) is a tree of blocks
// (paragraphs, headings, lists, tables, quotes, media) holding rich text
// (plain strings, arrays, styled spans). go-telegram/bot v1.19 does not
// know the member and drops it, so the message reaches the bridge with no
// text at all; the raw update still has it. richText reads it into plain
// text with a little Markdown (headings, lists, quotes, code, tables), the
// way Claude reads text, and names what it cannot pass on (a photo, a
// video, a block of a kind it does not know), which stays in the text as
// a bracketed placeholder so Claude knows something was there.
//
// Telegram is hostile input: any member may be missing, of another type,
// or nested without end. Nothing here fails; a value that is not what the
// Bot API documents is named unreadable, reading stops at richMaxDepth
// levels, and the text at richMaxRunes.

const (
	richMaxDepth = 32     // the Bot API allows 16 levels of nesting
	richMaxRunes = 40_000 // the Bot API allows 32,768 characters
)

// richReader collects the text of one rich message.
type richReader struct {
	b      strings.Builder
	runes  int
	cut    bool
	unread []string
}

// richText reads a rich_message value. ok is false when it is not an
// object with blocks (then nothing can be read of it).
func richText(raw json.RawMessage) (text string, unread []string, ok bool) {
	var msg struct {
		Blocks json.RawMessage `json:"blocks"`
	}
	if json.Unmarshal(raw, &msg) != nil || !isArray(msg.Blocks) {
		return "", nil, false
	}
	var r richReader
	r.blocks(msg.Blocks, 0, "")
	if r.cut {
		r.note("the rest of a very long message")
	}
	return strings.TrimSpace(r.b.String()), r.unread, true
}

func isArray(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '['
}

// note names something that could not be passed on, once.
func (r *richReader) note(what string) {
	for _, u := range r.unread {
		if u == what {
			return
		}
	}
	r.unread = append(r.unread, what)
}

// line writes one line of text with prefix before it (a quote's "> ").
func (r *richReader) line(prefix, s string) {
	if r.cut {
		return
	}
	for _, l := range strings.Split(s, "\n") {
		n := len([]rune(prefix + l))
		if r.runes+n > richMaxRunes {
			r.cut = true
			return
		}
		r.runes += n + 1
		r.b.WriteString(prefix + l + "\n")
	}
}

// blocks reads an array of RichBlock.
func (r *richReader) blocks(raw json.RawMessage, depth int, prefix string) {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		r.note("part of the message in a form untether does not know")
		return
	}
	for _, b := range list {
		r.block(b, depth, prefix)
	}
}

// richBlock is every member a RichBlock of any type may have.
type richBlock struct {
	Type       string            `json:"type"`
	Text       json.RawMessage   `json:"text"`
	Size       json.RawMessage   `json:"size"`
	Language   string            `json:"language"`
	Expression string            `json:"expression"`
	Items      []json.RawMessage `json:"items"`
	Blocks     json.RawMessage   `json:"blocks"`
	Credit     json.RawMessage   `json:"credit"`
	Caption    json.RawMessage   `json:"caption"`
	Summary    json.RawMessage   `json:"summary"`
	Cells      [][]struct {
		Text json.RawMessage `json:"text"`
	} `json:"cells"`
	Location *struct {
		Latitude  float64 `json:"latitude"`
		Longitude float64 `json:"longitude"`
	} `json:"location"`
}

// mediaBlocks are the blocks that hold a file untether does not pass on.
var mediaBlocks = map[string]string{
	"photo": "a photo", "video": "a video", "animation": "an animation", "audio": "an audio file", "voice_note": "a voice note",
}

func (r *richReader) block(raw json.RawMessage, depth int, prefix string) {
	if depth >= richMaxDepth {
		r.note("blocks nested deeper than untether reads")
		return
	}
	var b richBlock
	if json.Unmarshal(raw, &b) != nil {
		r.note("part of the message in a form untether does not know")
		return
	}
	text := func(v json.RawMessage) string { return r.text(v, depth+1) }
	switch b.Type {
	case "paragraph", "footer", "thinking":
		r.line(prefix, text(b.Text))
	case "heading":
		n, _ := strconv.Atoi(string(b.Size))
		r.line(prefix, strings.Repeat("#", min(max(n, 1), 6))+" "+text(b.Text))
	case "pre":
		r.line(prefix, "```"+oneWord(b.Language))
		r.line(prefix, text(b.Text))
		r.line(prefix, "```")
	case "divider":
		r.line(prefix, "---")
	case "mathematical_expression":
		r.line(prefix, "$$"+b.Expression+"$$")
	case "anchor":
		// a link target: no text of its own
	case "list":
		for _, it := range b.Items {
			r.listItem(it, depth+1, prefix)
		}
	case "blockquote":
		r.blocks(b.Blocks, depth+1, prefix+"> ")
		r.credit(prefix, text(b.Credit))
	case "pullquote":
		r.line(prefix+"> ", text(b.Text))
		r.credit(prefix, text(b.Credit))
	case "details":
		r.line(prefix, "▸ "+text(b.Summary))
		r.blocks(b.Blocks, depth+1, prefix+"  ")
	case "table":
		for _, row := range b.Cells {
			cells := make([]string, len(row))
			for i, c := range row {
				cells[i] = strings.ReplaceAll(text(c.Text), "\n", " ")
			}
			r.line(prefix, "| "+strings.Join(cells, " | ")+" |")
		}
		if c := text(b.Caption); c != "" {
			r.line(prefix, c)
		}
	case "collage", "slideshow":
		r.blocks(b.Blocks, depth+1, prefix)
		r.caption(prefix, b.Caption, depth)
	case "map":
		where := "a map"
		if b.Location != nil {
			where = fmt.Sprintf("a map of %.5f, %.5f", b.Location.Latitude, b.Location.Longitude)
		}
		r.line(prefix, "["+where+"]")
		r.caption(prefix, b.Caption, depth)
	default:
		if what, ok := mediaBlocks[b.Type]; ok {
			r.line(prefix, "["+what+" that untether could not pass on]")
			r.note(what)
			r.caption(prefix, b.Caption, depth)
			return
		}
		// A block newer than this code: its text if it has some, and it
		// is named either way.
		if len(b.Text) > 0 {
			r.line(prefix, text(b.Text))
		}
		if isArray(b.Blocks) {
			r.blocks(b.Blocks, depth+1, prefix)
		}
		r.line(prefix, "[a part of kind "+strconv.Quote(oneWord(b.Type))+" that untether cannot read]")
		r.note("a part of kind " + strconv.Quote(oneWord(b.Type)))
	}
}

// listItem reads a RichBlockListItem.
func (r *richReader) listItem(raw json.RawMessage, depth int, prefix string) {
	var it struct {
		Label       string          `json:"label"`
		Blocks      json.RawMessage `json:"blocks"`
		HasCheckbox bool            `json:"has_checkbox"`
		IsChecked   bool            `json:"is_checked"`
	}
	if json.Unmarshal(raw, &it) != nil {
		r.note("part of the message in a form untether does not know")
		return
	}
	mark := strings.TrimSpace(it.Label)
	if mark == "" || len([]rune(mark)) > 8 {
		mark = "-"
	}
	if it.HasCheckbox {
		mark += map[bool]string{true: " [x]", false: " [ ]"}[it.IsChecked]
	}
	var sub richReader
	sub.runes = r.runes
	sub.blocks(it.Blocks, depth+1, "")
	for _, u := range sub.unread {
		r.note(u)
	}
	lines := strings.Split(strings.TrimRight(sub.b.String(), "\n"), "\n")
	for i, l := range lines {
		if i == 0 {
			r.line(prefix, mark+" "+l)
		} else {
			r.line(prefix+"  ", l)
		}
	}
	r.cut = r.cut || sub.cut
}

func (r *richReader) credit(prefix, c string) {
	if c != "" {
		r.line(prefix, "— "+c)
	}
}

// caption reads a RichBlockCaption.
func (r *richReader) caption(prefix string, raw json.RawMessage, depth int) {
	var c struct {
		Text   json.RawMessage `json:"text"`
		Credit json.RawMessage `json:"credit"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &c) != nil {
		return
	}
	if t := r.text(c.Text, depth+1); t != "" {
		r.line(prefix, t)
	}
	r.credit(prefix, r.text(c.Credit, depth+1))
}

// richSpan is every member a RichText object of any type may have.
type richSpan struct {
	Type            string          `json:"type"`
	Text            json.RawMessage `json:"text"`
	URL             string          `json:"url"`
	Expression      string          `json:"expression"`
	AlternativeText string          `json:"alternative_text"`
}

// text reads a RichText: a string, an array, or a styled span.
func (r *richReader) text(raw json.RawMessage, depth int) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if depth >= richMaxDepth {
		r.note("text nested deeper than untether reads")
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	case '[':
		var parts []json.RawMessage
		if json.Unmarshal(raw, &parts) != nil {
			break
		}
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(r.text(p, depth+1))
		}
		return b.String()
	case '{':
		var s richSpan
		if json.Unmarshal(raw, &s) != nil {
			break
		}
		inner := r.text(s.Text, depth+1)
		switch s.Type {
		case "code":
			return "`" + inner + "`"
		case "custom_emoji":
			return s.AlternativeText
		case "mathematical_expression":
			return "$" + s.Expression + "$"
		case "url":
			if s.URL != "" && !strings.Contains(inner, s.URL) {
				if inner == "" {
					return s.URL
				}
				return inner + " (" + s.URL + ")"
			}
		}
		return inner // bold, italic, mentions, hashtags, … and kinds newer than this code: their text
	}
	r.note("part of the text in a form untether does not know")
	return ""
}

// oneWord keeps a member meant as a word (a code language, a block type)
// from carrying lines or markup into the text.
func oneWord(s string) string {
	s = strings.Join(strings.Fields(s), "")
	if r := []rune(s); len(r) > 32 {
		s = string(r[:32])
	}
	return s
}
