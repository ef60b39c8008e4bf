package fakeapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
)

// BlockType names a kind of content block in a scripted reply.
type BlockType string

// The block types a Reply can contain.
const (
	BlockText             BlockType = "text"
	BlockThinking         BlockType = "thinking"
	BlockRedactedThinking BlockType = "redacted_thinking"
	BlockToolUse          BlockType = "tool_use"
	// BlockServerToolUse is a tool the API ran itself (web_search,
	// web_fetch, code execution): streamed like tool_use, but the turn
	// does not stop for it; its result follows as a BlockRaw.
	BlockServerToolUse BlockType = "server_tool_use"
	// BlockRaw is sent whole (Raw) in content_block_start, with no deltas,
	// as the API sends a server tool's result block.
	BlockRaw BlockType = "raw"
)

// Stop reasons the CLI reacts to specially. Any string is accepted in a
// Reply; these are only the common ones.
const (
	StopEndTurn   = "end_turn"
	StopToolUse   = "tool_use"
	StopMaxTokens = "max_tokens"
	StopRefusal   = "refusal"
)

// StatusClientClosed is recorded as a Request's Status when the client went
// away (or the server closed) before the reply was complete, e.g. for Hang.
const StatusClientClosed = 499

// Block is one content block of a scripted reply.
type Block struct {
	Type      BlockType       `json:"type"`
	Text      string          `json:"text,omitempty"`      // text
	Thinking  string          `json:"thinking,omitempty"`  // thinking
	Signature string          `json:"signature,omitempty"` // thinking ("fakesig" when empty)
	Data      string          `json:"data,omitempty"`      // redacted_thinking
	ID        string          `json:"id,omitempty"`        // tool_use (generated when empty)
	Name      string          `json:"name,omitempty"`      // tool_use
	Input     json.RawMessage `json:"input,omitempty"`     // tool_use ({} when empty)
	Raw       json.RawMessage `json:"raw,omitempty"`       // raw: the whole block
}

// Reply is one scripted answer to a request.
type Reply struct {
	// Status >= 400 makes this an HTTP error reply
	// ({"type":"error","error":{"type":ErrorType,"message":ErrorMessage}}).
	// ErrorType defaults from the status (529 overloaded_error, 429
	// rate_limit_error, ...).
	Status       int    `json:"status,omitempty"`
	ErrorType    string `json:"error_type,omitempty"`
	ErrorMessage string `json:"error_message,omitempty"`
	// StreamError, for a streaming request, sends message_start and the
	// blocks, then an SSE "error" event of this type instead of
	// message_delta/message_stop.
	StreamError string `json:"stream_error,omitempty"`

	Content []Block `json:"content,omitempty"`
	// StopReason defaults to end_turn, or tool_use when a tool_use block is
	// present.
	StopReason string `json:"stop_reason,omitempty"`
	// Usage is merged over the default usage (input 1000, output ≈ bytes/4).
	Usage map[string]any `json:"usage,omitempty"`
	// Headers are extra response headers, on errors and successes (e.g.
	// anthropic-ratelimit-unified-*, retry-after).
	Headers map[string]string `json:"headers,omitempty"`
	// Model is the model to report (default: the request's model).
	Model string `json:"model,omitempty"`

	// DelayMs waits before answering; ChunkDelayMs waits before each block
	// start and each delta, the events the model takes time to produce
	// (text is always streamed in deltas of about 40 bytes), while the
	// opening and closing events come at once.
	DelayMs      int `json:"delay_ms,omitempty"`
	ChunkDelayMs int `json:"chunk_delay_ms,omitempty"`
	// Hang never finishes the reply until the client disconnects or the
	// server closes; when streaming, it hangs after message_start and the
	// first content_block_start, so the client has seen the turn begin.
	Hang bool `json:"hang,omitempty"`
	// EchoUser, with no Content, answers "echo: <last user prompt>".
	EchoUser bool `json:"echo_user,omitempty"`
	// Capture maps a name to a regexp run over the raw request body;
	// "{{name}}" in text, thinking and tool inputs is replaced by its first
	// group (or the whole match). Built in, without declaring them: {{cwd}}
	// (the CLI's "Primary working directory") and {{plan_path}} (the plan
	// file plan mode asks the model to write). Unresolved placeholders are
	// left as they are.
	Capture map[string]string `json:"capture,omitempty"`
}

// Match says which requests a rule applies to. Every set field must hold.
type Match struct {
	// Path is the exact request path (default: /v1/messages).
	Path string `json:"path,omitempty"`
	// UserContains: the whole last user message (text + tool_result text)
	// contains it.
	UserContains string `json:"user_contains,omitempty"`
	// PromptContains: the last block of the last user message contains it,
	// skipping <system-reminder> text blocks the CLI adds; a tool_result
	// block reads as "tool_result: <content>". Use it for "a new prompt".
	PromptContains string `json:"prompt_contains,omitempty"`
	// LastIsToolResult: that last block is (true) or is not (false) a
	// tool_result, i.e. the request continues a tool call.
	LastIsToolResult *bool `json:"last_is_tool_result,omitempty"`
	// AnyUserContains / NotAnyUserContains: some / no user message in the
	// conversation contains it.
	AnyUserContains    string `json:"any_user_contains,omitempty"`
	NotAnyUserContains string `json:"not_any_user_contains,omitempty"`
	// SystemContains / NotSystemContains: the system prompt does / does not
	// contain it.
	SystemContains    string `json:"system_contains,omitempty"`
	NotSystemContains string `json:"not_system_contains,omitempty"`
	ModelContains     string `json:"model_contains,omitempty"`
	// ToolResult: the last user message has (true) / has no (false)
	// tool_result block anywhere in it.
	ToolResult *bool `json:"tool_result,omitempty"`
	HasTools   *bool `json:"has_tools,omitempty"`
	Stream     *bool `json:"stream,omitempty"`
	// MaxTokensLE / MaxTokensGT: max_tokens <= N / > N (0 = unset).
	MaxTokensLE int `json:"max_tokens_le,omitempty"`
	MaxTokensGT int `json:"max_tokens_gt,omitempty"`
}

// Rule maps matching requests to a queue of replies: the n-th request the
// rule answers gets Replies[n]; after the last one, the last repeats unless
// Once is set, in which case the rule stops matching and later rules get a
// chance (so two 529s with Once, followed by a success rule, give
// "overloaded twice, then OK").
type Rule struct {
	Name    string  `json:"name,omitempty"`
	When    Match   `json:"when"`
	Replies []Reply `json:"replies"`
	Once    bool    `json:"once,omitempty"`
}

// Script is the whole behaviour of a Server: the first Rule whose When
// matches answers; when none does, Default answers (nil: an echo_user reply).
type Script struct {
	Rules   []Rule `json:"rules"`
	Default *Reply `json:"default,omitempty"`
}

var builtinCaptures = map[string]string{
	"cwd":       `Primary working directory: ([^\s\\"]+)`,
	"plan_path": `create your plan at ([^\s\\"]+\.md)`,
}

// ErrInvalidScript is wrapped by every script validation error.
var ErrInvalidScript = errors.New("invalid fakeapi script")

// Validate reports the first problem that would make the script misbehave
// silently: a rule without replies (it could never answer), an unknown block
// type, a status that is neither 0 nor an HTTP error, a bad capture regexp.
func (s Script) Validate() error {
	for i, r := range s.Rules {
		where := fmt.Sprintf("rule %d (%q)", i, r.Name)
		if len(r.Replies) == 0 {
			return fmt.Errorf("%w: %s has no replies", ErrInvalidScript, where)
		}
		for k, rp := range r.Replies {
			if err := rp.validate(); err != nil {
				return fmt.Errorf("%w: %s reply %d: %w", ErrInvalidScript, where, k, err)
			}
		}
	}
	if s.Default != nil {
		if err := s.Default.validate(); err != nil {
			return fmt.Errorf("%w: default reply: %w", ErrInvalidScript, err)
		}
	}
	return nil
}

func (rp Reply) validate() error {
	if rp.Status != 0 && (rp.Status < 400 || rp.Status > 599) {
		return fmt.Errorf("status %d is not an HTTP error status (use 0 for success)", rp.Status)
	}
	if rp.DelayMs < 0 || rp.ChunkDelayMs < 0 {
		return errors.New("negative delay")
	}
	for i, b := range rp.Content {
		switch b.Type {
		case BlockText, BlockThinking, BlockRedactedThinking:
		case BlockRaw:
			if !json.Valid(b.Raw) {
				return fmt.Errorf("block %d: raw block is not valid JSON", i)
			}
		case BlockToolUse, BlockServerToolUse:
			if b.Name == "" {
				return fmt.Errorf("block %d: tool_use without a name", i)
			}
			if len(b.Input) > 0 && !json.Valid(b.Input) {
				return fmt.Errorf("block %d: tool_use input is not valid JSON", i)
			}
		default:
			return fmt.Errorf("block %d: unknown block type %q", i, b.Type)
		}
	}
	for name, expr := range rp.Capture {
		if _, err := regexp.Compile(expr); err != nil {
			return fmt.Errorf("capture %q: %w", name, err)
		}
	}
	return nil
}

// ParseScript decodes a JSON script (the reference tool's format) and
// validates it. Unknown fields are rejected so a typo in a match field does
// not turn into a rule that matches everything.
func ParseScript(data []byte) (Script, error) {
	var s Script
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Script{}, fmt.Errorf("decode fakeapi script: %w", err)
	}
	if err := s.Validate(); err != nil {
		return Script{}, err
	}
	return s, nil
}

// LoadScript reads and parses a JSON script file.
func LoadScript(path string) (Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Script{}, fmt.Errorf("read fakeapi script: %w", err)
	}
	s, err := ParseScript(data)
	if err != nil {
		return Script{}, fmt.Errorf("load %s: %w", path, err)
	}
	return s, nil
}

// --- constructors for common values -----------------------------------------

// Bool returns a pointer to b, for the optional boolean Match fields.
func Bool(b bool) *bool { return &b }

// TextBlock is a text content block.
func TextBlock(s string) Block { return Block{Type: BlockText, Text: s} }

// ThinkingBlock is a thinking content block (signature filled in).
func ThinkingBlock(s string) Block { return Block{Type: BlockThinking, Thinking: s} }

// ToolUseBlock is a tool_use content block with a generated id. It panics if
// input cannot be marshalled to JSON, which is a bug in the test that calls
// it.
func ToolUseBlock(name string, input map[string]any) Block {
	raw := json.RawMessage(`{}`)
	if input != nil {
		b, err := json.Marshal(input)
		if err != nil {
			panic(fmt.Sprintf("fakeapi.ToolUseBlock(%q): marshal input: %v", name, err))
		}
		raw = b
	}
	return Block{Type: BlockToolUse, Name: name, Input: raw}
}

// Text is a successful reply with one text block.
func Text(s string) Reply { return Reply{Content: []Block{TextBlock(s)}} }

// Blocks is a successful reply with the given blocks.
func Blocks(blocks ...Block) Reply { return Reply{Content: blocks} }

// ToolUse is a successful reply calling one tool (stop_reason tool_use).
func ToolUse(name string, input map[string]any) Reply {
	return Reply{Content: []Block{ToolUseBlock(name, input)}}
}

// Error is an HTTP error reply; the error type follows from the status.
func Error(status int) Reply { return Reply{Status: status} }

// Echo is the echo_user reply: "echo: <last user prompt>".
func Echo() Reply { return Reply{EchoUser: true} }

// Hang is a reply that never finishes until the client goes away.
func Hang() Reply { return Reply{Hang: true} }
