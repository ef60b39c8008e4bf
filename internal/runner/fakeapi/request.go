package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Request is one logged request, as the server saw it.
type Request struct {
	Seq    int // 1-based arrival order
	Time   time.Time
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte // raw body
	// JSON is the body decoded generically when it is a JSON object, for
	// assertions on fields this package has no typed view of.
	JSON map[string]any
	// Rule names what answered: a script rule's Name (or "#<index>" when it
	// has none), "default", or an endpoint label: "hello", "count_tokens",
	// "models", "unknown-endpoint", "bad-json".
	Rule string
	// RuleIndex is the answering rule's index in the script, -1 otherwise;
	// ReplyIndex is which of its replies was sent.
	RuleIndex  int
	ReplyIndex int
	// Reply is the scripted reply sent (after {{placeholder}} substitution
	// and id generation), nil for the non-scripted endpoints.
	Reply *Reply
	// Status is the HTTP status sent: 0 while the reply is still being
	// written, StatusClientClosed when the client or server went away first.
	Status int
}

// Message is a typed view of one entry of a request's "messages".
type Message struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// Content is a message's content; a plain-string content reads as one text
// block.
type Content []ContentBlock

// ContentBlock is one block of request content. Only the fields tests need
// are decoded.
type ContentBlock struct {
	Type     string          `json:"type"`
	Text     string          `json:"text,omitempty"`
	Thinking string          `json:"thinking,omitempty"`
	ID       string          `json:"id,omitempty"`    // tool_use
	Name     string          `json:"name,omitempty"`  // tool_use
	Input    json.RawMessage `json:"input,omitempty"` // tool_use
	// ToolUseID, Content and IsError are set on tool_result blocks.
	ToolUseID string  `json:"tool_use_id,omitempty"`
	Content   Content `json:"content,omitempty"`
	IsError   bool    `json:"is_error,omitempty"`
}

// UnmarshalJSON accepts a string, an array of blocks, or null.
func (c *Content) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*c = nil
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*c = Content{{Type: "text", Text: s}}
		return nil
	}
	var blocks []ContentBlock
	if err := json.Unmarshal(b, &blocks); err != nil {
		return fmt.Errorf("content is neither a string nor a block array: %w", err)
	}
	*c = blocks
	return nil
}

// Text joins, one per line, the text of every text block and of every
// tool_result block.
func (c Content) Text() string {
	parts := make([]string, 0, len(c))
	for _, b := range c {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "tool_result":
			parts = append(parts, b.Content.Text())
		}
	}
	return strings.Join(parts, "\n")
}

// ToolResult is a tool_result block found in a request.
type ToolResult struct {
	ToolUseID string
	Text      string
	IsError   bool
}

// messagesBody is the part of a Messages API request body the matcher reads.
type messagesBody struct {
	Model     string            `json:"model"`
	Stream    bool              `json:"stream"`
	MaxTokens int               `json:"max_tokens"`
	System    Content           `json:"system"`
	Messages  []Message         `json:"messages"`
	Tools     []json.RawMessage `json:"tools"`
}

func parseMessagesBody(body []byte) (messagesBody, error) {
	var mb messagesBody
	if err := json.Unmarshal(body, &mb); err != nil {
		return messagesBody{}, fmt.Errorf("decode messages request: %w", err)
	}
	return mb, nil
}

// body decodes the request body; a body that is not a Messages request reads
// as empty, which suits the assertion helpers.
func (r Request) body() messagesBody {
	mb, err := parseMessagesBody(r.Body)
	if err != nil {
		return messagesBody{}
	}
	return mb
}

// IsModelCall reports whether this is a model call: a well-formed POST
// /v1/messages that the script answered (so Reply is set).
func (r Request) IsModelCall() bool { return r.Reply != nil }

// Messages is the request's conversation, including the role:"system"
// entries the CLI inserts.
func (r Request) Messages() []Message { return r.body().Messages }

// System is the system prompt's text.
func (r Request) System() string { return r.body().System.Text() }

// Model is the requested model.
func (r Request) Model() string { return r.body().Model }

// LastPrompt is what PromptContains matches: the last non-<system-reminder>
// block of the last user message ("tool_result: <text>" for a tool_result).
func (r Request) LastPrompt() string { return lastUserPrompt(r.body().Messages) }

// UserTexts is the text of each user message, in order.
func (r Request) UserTexts() []string {
	var out []string
	for _, m := range userMessages(r.body().Messages) {
		out = append(out, m.Content.Text())
	}
	return out
}

// AnyUserContains reports whether some user message contains sub, like the
// any_user_contains match.
func (r Request) AnyUserContains(sub string) bool {
	for _, t := range r.UserTexts() {
		if strings.Contains(t, sub) {
			return true
		}
	}
	return false
}

// ToolResults lists every tool_result block in the conversation, in order.
func (r Request) ToolResults() []ToolResult {
	var out []ToolResult
	for _, m := range r.body().Messages {
		for _, b := range m.Content {
			if b.Type == "tool_result" {
				out = append(out, ToolResult{ToolUseID: b.ToolUseID, Text: b.Content.Text(), IsError: b.IsError})
			}
		}
	}
	return out
}

// --- matching -------------------------------------------------------------

func userMessages(msgs []Message) []Message {
	var out []Message
	for _, m := range msgs {
		if m.Role == "user" {
			out = append(out, m)
		}
	}
	return out
}

const toolResultPrefix = "tool_result: "

// lastUserPrompt is the last block of the last user message that is not a
// <system-reminder> the CLI injected, or the tool_result text, because the CLI
// appends reminders after the prompt and merges a new prompt with a pending
// tool_result after an interrupt.
func lastUserPrompt(msgs []Message) string {
	us := userMessages(msgs)
	if len(us) == 0 {
		return ""
	}
	c := us[len(us)-1].Content
	for i := len(c) - 1; i >= 0; i-- {
		switch b := c[i]; b.Type {
		case "tool_result":
			return toolResultPrefix + b.Content.Text()
		case "text":
			if !strings.HasPrefix(strings.TrimSpace(b.Text), "<system-reminder>") {
				return b.Text
			}
		}
	}
	return c.Text()
}

func (w Match) matches(mb messagesBody) bool {
	us := userMessages(mb.Messages)
	var last Content
	if len(us) > 0 {
		last = us[len(us)-1].Content
	}
	if w.UserContains != "" && !strings.Contains(last.Text(), w.UserContains) {
		return false
	}
	prompt := lastUserPrompt(mb.Messages)
	if w.PromptContains != "" && !strings.Contains(prompt, w.PromptContains) {
		return false
	}
	if w.LastIsToolResult != nil && strings.HasPrefix(prompt, toolResultPrefix) != *w.LastIsToolResult {
		return false
	}
	anyUser := func(sub string) bool {
		for _, u := range us {
			if strings.Contains(u.Content.Text(), sub) {
				return true
			}
		}
		return false
	}
	if w.AnyUserContains != "" && !anyUser(w.AnyUserContains) {
		return false
	}
	if w.NotAnyUserContains != "" && anyUser(w.NotAnyUserContains) {
		return false
	}
	sys := mb.System.Text()
	if w.SystemContains != "" && !strings.Contains(sys, w.SystemContains) {
		return false
	}
	if w.NotSystemContains != "" && strings.Contains(sys, w.NotSystemContains) {
		return false
	}
	if w.ModelContains != "" && !strings.Contains(mb.Model, w.ModelContains) {
		return false
	}
	if w.ToolResult != nil {
		has := false
		for _, b := range last {
			has = has || b.Type == "tool_result"
		}
		if has != *w.ToolResult {
			return false
		}
	}
	if w.HasTools != nil && (len(mb.Tools) > 0) != *w.HasTools {
		return false
	}
	if w.Stream != nil && mb.Stream != *w.Stream {
		return false
	}
	if w.MaxTokensLE > 0 && mb.MaxTokens > w.MaxTokensLE {
		return false
	}
	if w.MaxTokensGT > 0 && mb.MaxTokens <= w.MaxTokensGT {
		return false
	}
	return true
}
