package fakeapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitTimeout bounds condition waits; it is generous because the test box is
// small and shared. Nothing asserts on how long anything took.
const waitTimeout = 30 * time.Second

func waitCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	t.Cleanup(cancel)
	return ctx
}

type sseEvent struct {
	Name string
	Data map[string]any
}

func postCtx(t *testing.T, ctx context.Context, base, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/messages?beta=true", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("content-type", "application/json")
	req.Header.Set("x-api-key", "test")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func post(t *testing.T, base, body string) *http.Response {
	t.Helper()
	return postCtx(t, waitCtx(t), base, body)
}

// readSSE parses a whole event stream, checking every event's "event:" name
// equals its data's "type".
func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	var name string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "event: "); ok {
			name = n
			continue
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(d), &m), "data line %q", d)
			assert.Equal(t, name, m["type"], "event name vs data type")
			out = append(out, sseEvent{Name: name, Data: m})
		}
	}
	return out
}

func names(ev []sseEvent) string {
	var n []string
	for _, e := range ev {
		n = append(n, e.Name)
	}
	return strings.Join(n, " ")
}

// deltaText concatenates the deltas of one kind (text, thinking, partial_json).
func deltaText(ev []sseEvent, field string) string {
	var sb strings.Builder
	for _, e := range ev {
		if d, ok := e.Data["delta"].(map[string]any); ok {
			if s, ok := d[field].(string); ok {
				sb.WriteString(s)
			}
		}
	}
	return sb.String()
}

func stopReason(ev []sseEvent) any {
	for _, e := range ev {
		if e.Name == "message_delta" {
			return e.Data["delta"].(map[string]any)["stop_reason"]
		}
	}
	return nil
}

func userBody(stream bool, prompt string) string {
	b, _ := json.Marshal(map[string]any{
		"model": "claude-test", "stream": stream, "max_tokens": 128000,
		"messages": []any{map[string]any{"role": "user", "content": prompt}},
	})
	return string(b)
}

func TestURLIsLoopback(t *testing.T) {
	s := New(t, Script{})
	u, err := url.Parse(s.URL())
	require.NoError(t, err)
	assert.Equal(t, "http", u.Scheme)
	assert.Equal(t, "127.0.0.1", u.Hostname())
	assert.NotEmpty(t, u.Port())
}

func TestStreamTextShape(t *testing.T) {
	s := New(t, Script{Rules: []Rule{{Name: "hi", When: Match{PromptContains: "hi"}, Replies: []Reply{Text("Hello from the fake API.")}}}})
	resp := post(t, s.URL(), userBody(true, "hi"))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("content-type"))
	assert.Equal(t, "req_fake000001", resp.Header.Get("request-id"))

	ev := readSSE(t, resp.Body)
	assert.Equal(t, "message_start ping content_block_start content_block_delta content_block_stop message_delta message_stop", names(ev))
	msg := ev[0].Data["message"].(map[string]any)
	assert.Equal(t, "claude-test", msg["model"])
	assert.Equal(t, "assistant", msg["role"])
	assert.True(t, strings.HasPrefix(msg["id"].(string), "msg_"))
	assert.Equal(t, map[string]any{"type": "text", "text": ""}, ev[2].Data["content_block"])
	assert.Equal(t, "Hello from the fake API.", deltaText(ev, "text"))
	assert.Equal(t, StopEndTurn, stopReason(ev))
}

func TestStreamBlocks(t *testing.T) {
	long := strings.Repeat("héllo wörld ", 20) // multi-byte runes across delta boundaries
	tests := []struct {
		name      string
		reply     Reply
		events    string
		field     string
		wantDelta string
		wantStop  any
	}{
		{
			name:   "thinking then text",
			reply:  Blocks(ThinkingBlock("hmm"), TextBlock("answer")),
			events: "message_start ping content_block_start content_block_delta content_block_delta content_block_stop content_block_start content_block_delta content_block_stop message_delta message_stop",
			field:  "thinking", wantDelta: "hmm", wantStop: StopEndTurn,
		},
		{
			name:   "refusal stop reason",
			reply:  Reply{Content: []Block{TextBlock("I can't")}, StopReason: StopRefusal},
			events: "message_start ping content_block_start content_block_delta content_block_stop message_delta message_stop",
			field:  "text", wantDelta: "I can't", wantStop: StopRefusal,
		},
		{
			name:   "stream error replaces message_stop",
			reply:  Reply{Content: []Block{TextBlock("partial")}, StreamError: "overloaded_error"},
			events: "message_start ping content_block_start content_block_delta content_block_stop error",
			field:  "text", wantDelta: "partial", wantStop: nil,
		},
		{
			name:   "redacted thinking has no deltas",
			reply:  Blocks(Block{Type: BlockRedactedThinking, Data: "xyz"}),
			events: "message_start ping content_block_start content_block_stop message_delta message_stop",
			field:  "text", wantDelta: "", wantStop: StopEndTurn,
		},
		{
			name:   "long text in small deltas",
			reply:  Reply{Content: []Block{TextBlock(long)}, ChunkDelayMs: 1},
			events: "",
			field:  "text", wantDelta: long, wantStop: StopEndTurn,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := New(t, Script{Default: &tc.reply})
			ev := readSSE(t, post(t, s.URL(), userBody(true, "x")).Body)
			if tc.events != "" {
				assert.Equal(t, tc.events, names(ev))
			}
			assert.Equal(t, tc.wantDelta, deltaText(ev, tc.field))
			assert.Equal(t, tc.wantStop, stopReason(ev))
			for _, e := range ev {
				if d, ok := e.Data["delta"].(map[string]any); ok && d["type"] == "text_delta" {
					assert.LessOrEqual(t, len(d["text"].(string)), deltaBytes+3, "delta too big")
				}
			}
			if tc.name == "stream error replaces message_stop" {
				last := ev[len(ev)-1].Data["error"].(map[string]any)
				assert.Equal(t, "overloaded_error", last["type"])
			}
		})
	}
}

func TestThinkingSignature(t *testing.T) {
	s := New(t, Script{Default: &Reply{Content: []Block{ThinkingBlock("deep")}}})
	ev := readSSE(t, post(t, s.URL(), userBody(true, "x")).Body)
	assert.Equal(t, "fakesig", deltaText(ev, "signature"))
	assert.Equal(t, map[string]any{"type": "thinking", "thinking": "", "signature": ""}, ev[2].Data["content_block"])
}

const cwdSystem = `"system":[{"type":"text","text":"You are Claude.\nPrimary working directory: /w/d\nmore"}]`

func TestToolUseThenFollowUp(t *testing.T) {
	s := New(t, Script{Rules: []Rule{
		{Name: "after-tool", When: Match{AnyUserContains: "run it", LastIsToolResult: Bool(true)}, Replies: []Reply{Text("The command ran.")}},
		{Name: "call-bash", When: Match{PromptContains: "run it", LastIsToolResult: Bool(false)}, Replies: []Reply{ToolUse("Bash", map[string]any{"command": "ls {{cwd}}"})}},
	}})

	first := `{"model":"m","stream":true,` + cwdSystem + `,"messages":[{"role":"user","content":[{"type":"text","text":"please run it"},{"type":"text","text":"<system-reminder>x</system-reminder>"}]}]}`
	ev := readSSE(t, post(t, s.URL(), first).Body)
	assert.Equal(t, "message_start ping content_block_start content_block_delta content_block_stop message_delta message_stop", names(ev))
	start := ev[2].Data["content_block"].(map[string]any)
	assert.Equal(t, "tool_use", start["type"])
	assert.Equal(t, "Bash", start["name"])
	toolID, _ := start["id"].(string)
	assert.True(t, strings.HasPrefix(toolID, "toolu_"), toolID)
	assert.JSONEq(t, `{"command":"ls /w/d"}`, deltaText(ev, "partial_json"))
	assert.Equal(t, StopToolUse, stopReason(ev))

	followUp := `{"model":"m","stream":true,"messages":[{"role":"user","content":"please run it"},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"` + toolID + `","name":"Bash","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + toolID + `","content":[{"type":"text","text":"a b"}]}]}]}`
	ev = readSSE(t, post(t, s.URL(), followUp).Body)
	assert.Equal(t, "The command ran.", deltaText(ev, "text"))

	reqs := s.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, "call-bash", reqs[0].Rule)
	assert.Equal(t, 1, reqs[0].RuleIndex)
	require.NotNil(t, reqs[0].Reply)
	assert.Equal(t, toolID, reqs[0].Reply.Content[0].ID, "the log shows the generated id")
	assert.Equal(t, "after-tool", reqs[1].Rule)
	assert.Equal(t, []ToolResult{{ToolUseID: toolID, Text: "a b"}}, reqs[1].ToolResults())
	assert.Equal(t, "tool_result: a b", reqs[1].LastPrompt())
}

func TestToolIDsAreUnique(t *testing.T) {
	s := New(t, Script{Default: &Reply{Content: []Block{ToolUseBlock("Read", nil), ToolUseBlock("Read", nil)}}})
	post(t, s.URL(), userBody(false, "a"))
	post(t, s.URL(), userBody(false, "b"))
	seen := map[string]bool{}
	for _, r := range s.Requests() {
		for _, b := range r.Reply.Content {
			assert.False(t, seen[b.ID], "duplicate id %s", b.ID)
			seen[b.ID] = true
			assert.JSONEq(t, `{}`, string(b.Input))
		}
	}
	assert.Len(t, seen, 4)
}

func TestOnceErrorsThenSuccess(t *testing.T) {
	s := New(t, Script{Rules: []Rule{
		{Name: "529-twice", When: Match{PromptContains: "overload"}, Once: true, Replies: []Reply{Error(529), Error(529)}},
		{Name: "ok", When: Match{PromptContains: "overload"}, Replies: []Reply{Text("fine now")}},
	}})
	var got []int
	for range 3 {
		resp := post(t, s.URL(), userBody(true, "overload me"))
		got = append(got, resp.StatusCode)
		if resp.StatusCode != http.StatusOK {
			var e map[string]any
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
			assert.Equal(t, "error", e["type"])
			assert.Equal(t, "overloaded_error", e["error"].(map[string]any)["type"])
		} else {
			assert.Equal(t, "fine now", deltaText(readSSE(t, resp.Body), "text"))
		}
	}
	assert.Equal(t, []int{529, 529, 200}, got)
	var rules []string
	for _, r := range s.Requests() {
		rules = append(rules, r.Rule)
	}
	assert.Equal(t, []string{"529-twice", "529-twice", "ok"}, rules)
}

func TestLastReplyRepeatsWithoutOnce(t *testing.T) {
	s := New(t, Script{Rules: []Rule{{When: Match{}, Replies: []Reply{Text("one"), Text("two")}}}})
	var got []string
	for range 3 {
		got = append(got, deltaText(readSSE(t, post(t, s.URL(), userBody(true, "x")).Body), "text"))
	}
	assert.Equal(t, []string{"one", "two", "two"}, got)
	reqs := s.Requests()
	assert.Equal(t, "#0", reqs[2].Rule, "unnamed rules are named by index")
	assert.Equal(t, 1, reqs[2].ReplyIndex)
}

func TestErrorReplies(t *testing.T) {
	tests := []struct {
		reply    Reply
		wantType string
		wantMsg  string
		header   [2]string
	}{
		{Error(529), "overloaded_error", "fakeapi scripted overloaded_error", [2]string{}},
		{Reply{Status: 429, Headers: map[string]string{"retry-after": "1", "anthropic-ratelimit-unified-status": "rejected"}}, "rate_limit_error", "fakeapi scripted rate_limit_error", [2]string{"anthropic-ratelimit-unified-status", "rejected"}},
		{Error(500), "api_error", "fakeapi scripted api_error", [2]string{}},
		{Error(401), "authentication_error", "fakeapi scripted authentication_error", [2]string{}},
		{Reply{Status: 400, ErrorType: "invalid_request_error", ErrorMessage: "prompt is too long"}, "invalid_request_error", "prompt is too long", [2]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.wantType+"/"+tc.wantMsg, func(t *testing.T) {
			s := New(t, Script{Default: &tc.reply})
			resp := post(t, s.URL(), userBody(true, "x"))
			assert.Equal(t, tc.reply.Status, resp.StatusCode)
			assert.Equal(t, "application/json", resp.Header.Get("content-type"))
			if tc.header[0] != "" {
				assert.Equal(t, tc.header[1], resp.Header.Get(tc.header[0]))
			}
			var e struct {
				Type  string `json:"type"`
				Error struct {
					Type    string `json:"type"`
					Message string `json:"message"`
				} `json:"error"`
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
			assert.Equal(t, "error", e.Type)
			assert.Equal(t, tc.wantType, e.Error.Type)
			assert.Equal(t, tc.wantMsg, e.Error.Message)
			reqs := s.Requests()
			require.Len(t, reqs, 1)
			assert.Equal(t, tc.reply.Status, reqs[0].Status)
		})
	}
}

func TestNonStreamingReply(t *testing.T) {
	s := New(t, Script{Default: &Reply{
		Content: []Block{TextBlock("plain")}, Model: "claude-other",
		Usage: map[string]any{"input_tokens": 7}, Headers: map[string]string{"x-extra": "1"},
	}})
	resp := post(t, s.URL(), userBody(false, "x"))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("x-extra"))
	var msg struct {
		Type       string           `json:"type"`
		Model      string           `json:"model"`
		StopReason string           `json:"stop_reason"`
		Content    []map[string]any `json:"content"`
		Usage      map[string]any   `json:"usage"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&msg))
	assert.Equal(t, "message", msg.Type)
	assert.Equal(t, "claude-other", msg.Model)
	assert.Equal(t, StopEndTurn, msg.StopReason)
	assert.Equal(t, []map[string]any{{"type": "text", "text": "plain"}}, msg.Content)
	assert.EqualValues(t, 7, msg.Usage["input_tokens"])
	assert.EqualValues(t, 0, msg.Usage["cache_read_input_tokens"])
}

func TestUsageOverrideInStream(t *testing.T) {
	s := New(t, Script{Default: &Reply{Content: []Block{TextBlock("x")}, Usage: map[string]any{"input_tokens": 5, "cache_read_input_tokens": 9}}})
	ev := readSSE(t, post(t, s.URL(), userBody(true, "x")).Body)
	u := ev[0].Data["message"].(map[string]any)["usage"].(map[string]any)
	assert.EqualValues(t, 5, u["input_tokens"])
	assert.EqualValues(t, 9, u["cache_read_input_tokens"])
	assert.EqualValues(t, 1, u["output_tokens"], "message_start reports 1 output token like the real API")
}

func TestDefaultReplies(t *testing.T) {
	tests := []struct {
		name   string
		def    *Reply
		prompt string
		want   string
	}{
		{"no default echoes", nil, "say this", "echo: say this"},
		{"explicit echo", &Reply{EchoUser: true}, "  padded  ", "echo: padded"},
		{"empty reply", &Reply{}, "x", "ok (fakeapi default reply)"},
		{"scripted default", &Reply{Content: []Block{TextBlock("fallback")}}, "x", "fallback"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := New(t, Script{Rules: []Rule{{When: Match{PromptContains: "never"}, Replies: []Reply{Text("no")}}}, Default: tc.def})
			assert.Equal(t, tc.want, deltaText(readSSE(t, post(t, s.URL(), userBody(true, tc.prompt)).Body), "text"))
			assert.Equal(t, "default", s.Requests()[0].Rule)
			assert.Equal(t, -1, s.Requests()[0].RuleIndex)
		})
	}
}

func TestCaptureSubstitution(t *testing.T) {
	s := New(t, Script{Default: &Reply{
		Capture: map[string]string{"ticket": `TICKET-(\d+)`},
		Content: []Block{
			TextBlock("ticket {{ticket}} in {{cwd}}, unknown {{nope}}"),
			ToolUseBlock("Write", map[string]any{"file_path": "{{plan_path}}", "content": "{{ticket}}"}),
		},
	}})
	body := `{"model":"m","stream":false,"system":"Primary working directory: /tmp/a\"b\nplease create your plan at /h/.claude/plans/x.md now",` +
		`"messages":[{"role":"user","content":"fix TICKET-42"}]}`
	resp := post(t, s.URL(), body)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	rp := s.Requests()[0].Reply
	assert.Equal(t, "ticket 42 in /tmp/a, unknown {{nope}}", rp.Content[0].Text)
	assert.JSONEq(t, `{"file_path":"/h/.claude/plans/x.md","content":"42"}`, string(rp.Content[1].Input))
}

func TestHangReleasedOnClientCancel(t *testing.T) {
	s := New(t, Script{Default: &Reply{Content: []Block{TextBlock("never finished")}, Hang: true}})
	ctx, cancel := context.WithCancel(waitCtx(t))
	resp := postCtx(t, ctx, s.URL(), userBody(true, "x"))
	require.Equal(t, http.StatusOK, resp.StatusCode)

	// The stream has begun: read up to the first content_block_start.
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		require.NoError(t, err, "stream ended before content_block_start")
		if strings.HasPrefix(line, "event: content_block_start") {
			break
		}
	}
	reqs := s.Requests()
	require.Len(t, reqs, 1)
	assert.Zero(t, reqs[0].Status, "still being answered")

	cancel()
	reqs, err := s.WaitFor(waitCtx(t), func(r []Request) bool { return r[0].Status != 0 })
	require.NoError(t, err)
	assert.Equal(t, StatusClientClosed, reqs[0].Status)
}

func TestHangNonStreamingAndDelayReleasedByClose(t *testing.T) {
	for _, rp := range []Reply{{Hang: true}, {DelayMs: int(time.Hour / time.Millisecond)}} {
		s, err := Start(Script{Default: &rp})
		require.NoError(t, err)
		errc := make(chan error, 1)
		go func() {
			resp, err := http.Post(s.URL()+"/v1/messages", "application/json", strings.NewReader(userBody(false, "x")))
			if err == nil {
				resp.Body.Close()
			}
			errc <- err
		}()
		_, err = s.WaitForRequests(waitCtx(t), 1)
		require.NoError(t, err)
		require.NoError(t, s.Close(), "Close returns although a reply hangs")
		require.NoError(t, s.Close(), "Close is idempotent")
		assert.Error(t, <-errc, "the client sees the connection drop")
		assert.Equal(t, StatusClientClosed, s.Requests()[0].Status)
	}
}

func TestDelayIsApplied(t *testing.T) {
	s := New(t, Script{Default: &Reply{Content: []Block{TextBlock("late")}, DelayMs: 50}})
	start := time.Now()
	resp := post(t, s.URL(), userBody(true, "x"))
	assert.Equal(t, "late", deltaText(readSSE(t, resp.Body), "text"))
	// A lower bound only: a slow machine makes this longer, never shorter.
	assert.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)
}

func TestRequestLog(t *testing.T) {
	s := New(t, Script{})
	body := `{"model":"claude-opus","stream":true,"max_tokens":128000,` + cwdSystem + `,"messages":[` +
		`{"role":"user","content":"first turn"},` +
		`{"role":"assistant","content":[{"type":"text","text":"echo: first turn"}]},` +
		`{"role":"system","content":"The user sent a new message while you were working"},` +
		`{"role":"user","content":[{"type":"text","text":"second turn"},{"type":"text","text":"<system-reminder>r</system-reminder>"}]}]}`
	resp := post(t, s.URL(), body)
	readSSE(t, resp.Body)

	reqs, err := s.WaitFor(waitCtx(t), func(r []Request) bool { return len(r) == 1 && r[0].Status != 0 })
	require.NoError(t, err)
	r := reqs[0]
	assert.Equal(t, 1, r.Seq)
	assert.Equal(t, http.MethodPost, r.Method)
	assert.Equal(t, "/v1/messages", r.Path)
	assert.Equal(t, "beta=true", r.Query)
	assert.True(t, r.IsModelCall())
	assert.Equal(t, "test", r.Header.Get("X-Api-Key"))
	assert.Equal(t, "claude-opus", r.JSON["model"])
	assert.Equal(t, "claude-opus", r.Model())
	assert.Contains(t, r.System(), "Primary working directory: /w/d")
	assert.Equal(t, "default", r.Rule)
	assert.Equal(t, http.StatusOK, r.Status)
	assert.Equal(t, "echo: second turn", r.Reply.Content[0].Text)
	assert.Equal(t, "second turn", r.LastPrompt())
	assert.Equal(t, []string{"first turn", "second turn\n<system-reminder>r</system-reminder>"}, r.UserTexts())
	assert.True(t, r.AnyUserContains("first turn"))
	assert.False(t, r.AnyUserContains("working"), "role:system entries are not user messages")
	msgs := r.Messages()
	require.Len(t, msgs, 4)
	assert.Equal(t, []string{"user", "assistant", "system", "user"}, []string{msgs[0].Role, msgs[1].Role, msgs[2].Role, msgs[3].Role})
	assert.Equal(t, "echo: first turn", msgs[1].Content.Text())
	assert.Empty(t, r.ToolResults())
	assert.Len(t, s.ModelCalls(), 1)

	// Requests returns a copy: changing it does not change the log.
	reqs[0].Rule = "tampered"
	assert.Equal(t, "default", s.Requests()[0].Rule)
}

func TestWaitForRequestsHonoursContext(t *testing.T) {
	s := New(t, Script{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	reqs, err := s.WaitForRequests(ctx, 1)
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	assert.Empty(t, reqs)

	// A waiter already blocked is woken by a request arriving.
	type waited struct {
		reqs []Request
		err  error
	}
	done := make(chan waited, 1)
	go func() {
		r, err := s.WaitForRequests(waitCtx(t), 2)
		done <- waited{r, err}
	}()
	post(t, s.URL(), userBody(false, "a"))
	post(t, s.URL(), "not json")
	w := <-done
	require.NoError(t, w.err)
	assert.Len(t, w.reqs, 2)

	// The bad request above is logged but is not a model call. The request
	// is logged before its response is written, so WaitForModelCalls can
	// return while the POST is still in flight: the goroutine's outcome is
	// collected before the test returns (and the server closes), never
	// asserted on after it.
	posted := make(chan error, 1)
	go func() {
		// Not post: require must not be called off the test goroutine.
		resp, err := http.Post(s.URL()+"/v1/messages", "application/json", strings.NewReader(userBody(false, "c")))
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		posted <- err
	}()
	calls, err := s.WaitForModelCalls(waitCtx(t), 2)
	require.NoError(t, err)
	require.Len(t, calls, 2)
	assert.Equal(t, "a", calls[0].LastPrompt())
	assert.Equal(t, "c", calls[1].LastPrompt())
	require.NoError(t, <-posted, "the model call completes")
}

func TestEndpoints(t *testing.T) {
	s := New(t, Script{Default: &Reply{Status: 500}})
	tests := []struct {
		method, path, body string
		wantStatus         int
		wantRule           string
		wantInBody         string
	}{
		{http.MethodHead, "/api/hello", "", 200, "hello", ""},
		{http.MethodPost, "/v1/messages/count_tokens", `{"messages":[]}`, 200, "count_tokens", `"input_tokens"`},
		{http.MethodGet, "/v1/models", "", 200, "models", `"claude-sonnet-4-5-20250929"`},
		{http.MethodGet, "/v1/other", "", 404, "unknown-endpoint", `"not_found_error"`},
		{http.MethodPost, "/v1/messages", `not json`, 400, "bad-json", `"invalid_request_error"`},
		{http.MethodPost, "/v1/messages", `["an array"]`, 400, "bad-json", `"invalid_request_error"`},
	}
	for i, tc := range tests {
		t.Run(tc.method+tc.path, func(t *testing.T) {
			req, err := http.NewRequestWithContext(waitCtx(t), tc.method, s.URL()+tc.path, strings.NewReader(tc.body))
			require.NoError(t, err)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, tc.wantStatus, resp.StatusCode)
			assert.Contains(t, string(b), tc.wantInBody)
			reqs := s.Requests()
			require.Len(t, reqs, i+1)
			assert.Equal(t, tc.wantRule, reqs[i].Rule)
			assert.Equal(t, tc.wantStatus, reqs[i].Status)
			assert.Nil(t, reqs[i].Reply)
		})
	}
	assert.Empty(t, s.ModelCalls(), "none of these was a valid model call")
}

func TestSetScriptResetsCounters(t *testing.T) {
	once := Rule{Name: "once", When: Match{}, Once: true, Replies: []Reply{Text("only once")}}
	s := New(t, Script{Rules: []Rule{once}})
	text := func() string { return deltaText(readSSE(t, post(t, s.URL(), userBody(true, "p")).Body), "text") }
	assert.Equal(t, "only once", text())
	assert.Equal(t, "echo: p", text(), "once rule used up")

	require.NoError(t, s.SetScript(Script{Rules: []Rule{once}}))
	assert.Equal(t, "only once", text(), "the same rule answers again after SetScript")
	assert.Len(t, s.Requests(), 3, "the log is kept")

	err := s.SetScript(Script{Rules: []Rule{{Name: "empty"}}})
	require.ErrorIs(t, err, ErrInvalidScript)
	assert.Equal(t, "echo: p", text(), "an invalid script leaves the old one in place")
}

func TestStartRejectsInvalidScript(t *testing.T) {
	_, err := Start(Script{Rules: []Rule{{Replies: []Reply{{Status: 200}}}}})
	require.ErrorIs(t, err, ErrInvalidScript)
}
