package fakeapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// deltaBytes is roughly how much text one SSE delta carries, so clients see
// a reply arrive in pieces as from the real API.
const deltaBytes = 40

// prepareLocked turns a scripted reply into exactly what will be sent: the
// blocks copied (never aliasing the script), placeholders filled, tool ids
// generated, the echo text and the stop reason decided, error type defaulted.
// The result is what the request log shows. s.mu must be held (for ids).
func (s *Server) prepareLocked(rp Reply, mb messagesBody, body []byte) Reply {
	if rp.Status >= 400 {
		if rp.ErrorType == "" {
			rp.ErrorType = defaultErrorType(rp.Status)
		}
		if rp.ErrorMessage == "" {
			rp.ErrorMessage = "fakeapi scripted " + rp.ErrorType
		}
		return rp
	}
	blocks := append([]Block(nil), rp.Content...)
	if len(blocks) == 0 {
		txt := "ok (fakeapi default reply)"
		if rp.EchoUser {
			lu := strings.TrimSpace(lastUserPrompt(mb.Messages))
			if len(lu) > 200 {
				lu = truncateUTF8(lu, 200)
			}
			txt = "echo: " + lu
		}
		blocks = []Block{TextBlock(txt)}
	}
	fill := placeholderFiller(rp.Capture, body)
	hasTool := false
	for i := range blocks {
		b := &blocks[i]
		b.Text = fill(b.Text, false)
		b.Thinking = fill(b.Thinking, false)
		switch b.Type {
		case BlockToolUse, BlockServerToolUse:
			hasTool = hasTool || b.Type == BlockToolUse // the API ran a server tool itself
			if b.ID == "" {
				b.ID = s.nextIDLocked("toolu")
			}
			if len(b.Input) == 0 {
				b.Input = json.RawMessage(`{}`)
			}
			b.Input = json.RawMessage(fill(string(b.Input), true))
		case BlockThinking:
			if b.Signature == "" {
				b.Signature = "fakesig"
			}
		}
	}
	rp.Content = blocks
	if rp.StopReason == "" {
		rp.StopReason = StopEndTurn
		if hasTool {
			rp.StopReason = StopToolUse
		}
	}
	return rp
}

func truncateUTF8(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func defaultErrorType(status int) string {
	switch status {
	case 529:
		return "overloaded_error"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusBadRequest:
		return "invalid_request_error"
	default:
		return "api_error"
	}
}

// placeholderFiller returns a function replacing {{name}} with the first group
// of the named capture regexp run over the raw request body (built-ins
// included); jsonEscape escapes the value for use inside a JSON string.
func placeholderFiller(capture map[string]string, body []byte) func(s string, jsonEscape bool) string {
	exprs := make(map[string]string, len(builtinCaptures)+len(capture))
	for k, v := range builtinCaptures {
		exprs[k] = v
	}
	for k, v := range capture {
		exprs[k] = v
	}
	vals := map[string]string{}
	get := func(name string) (string, bool) {
		if v, ok := vals[name]; ok {
			return v, true
		}
		// Validate compiled every capture already; a failure here just leaves
		// the placeholder in place.
		re, err := regexp.Compile(exprs[name])
		if err != nil || exprs[name] == "" {
			return "", false
		}
		m := re.FindSubmatch(body)
		if m == nil {
			return "", false
		}
		v := string(m[0])
		if len(m) > 1 {
			v = string(m[1])
		}
		vals[name] = v
		return v, true
	}
	return func(s string, jsonEscape bool) string {
		if !strings.Contains(s, "{{") {
			return s
		}
		for name := range exprs {
			ph := "{{" + name + "}}"
			if !strings.Contains(s, ph) {
				continue
			}
			v, ok := get(name)
			if !ok {
				continue
			}
			if jsonEscape {
				b, _ := json.Marshal(v) // a string always marshals
				v = string(b[1 : len(b)-1])
			}
			s = strings.ReplaceAll(s, ph, v)
		}
		return s
	}
}

// wait sleeps for d unless the client goes away or the server closes first;
// it reports whether the full time passed.
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.done:
		return false
	}
}

// hang blocks until the client goes away or the server closes.
func (s *Server) hang(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-s.done:
	}
}

// answer writes a prepared reply and returns the status to log.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, mb messagesBody, rp Reply, msgID string) int {
	ctx := r.Context()
	if rp.DelayMs > 0 && !s.wait(ctx, time.Duration(rp.DelayMs)*time.Millisecond) {
		return StatusClientClosed
	}
	for k, v := range rp.Headers {
		w.Header().Set(k, v)
	}
	if rp.Status >= 400 {
		writeJSON(w, rp.Status, errBody(rp.ErrorType, rp.ErrorMessage))
		return rp.Status
	}

	model := mb.Model
	if rp.Model != "" {
		model = rp.Model
	}
	outTok := 0
	for _, b := range rp.Content {
		outTok += (len(b.Text)+len(b.Thinking)+len(b.Input))/4 + 1
	}
	usage := map[string]any{
		"input_tokens": 1000, "output_tokens": outTok,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
	}
	for k, v := range rp.Usage {
		usage[k] = v
	}

	if !mb.Stream {
		if rp.Hang {
			s.hang(ctx)
			return StatusClientClosed
		}
		content := make([]any, 0, len(rp.Content))
		for _, b := range rp.Content {
			content = append(content, blockJSON(b, true))
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": rp.StopReason, "stop_sequence": nil, "usage": usage,
		})
		return http.StatusOK
	}
	return s.stream(w, r, rp, msgID, model, usage, outTok)
}

// stream writes the reply as Messages API server-sent events.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, rp Reply, msgID, model string, usage map[string]any, outTok int) int {
	ctx := r.Context()
	fl, _ := w.(http.Flusher)
	w.Header().Set("content-type", "text/event-stream")
	w.Header().Set("cache-control", "no-cache")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriter(w)
	// send writes one event. The model takes ChunkDelayMs to produce each
	// block start and each delta, so send waits that long before them; the
	// opening events come at once, and the closing ones (content_block_stop,
	// message_delta, message_stop) follow the last delta at once, as the
	// real API's do (a fake that paused after them delayed every result by
	// several chunk delays).
	send := func(event string, data any) bool {
		produced := event == "content_block_start" || event == "content_block_delta"
		if rp.ChunkDelayMs > 0 && produced && !s.wait(ctx, time.Duration(rp.ChunkDelayMs)*time.Millisecond) {
			return false
		}
		b, err := json.Marshal(data)
		if err != nil {
			// Only scripted usage values could fail to marshal; say so in
			// the stream rather than sending a malformed event.
			b, _ = json.Marshal(errBody("api_error", "fakeapi: marshal event: "+err.Error()))
			event = "error"
		}
		fmt.Fprintf(bw, "event: %s\ndata: %s\n\n", event, b)
		if bw.Flush() != nil {
			return false
		}
		if fl != nil {
			fl.Flush()
		}
		return ctx.Err() == nil
	}
	startUsage := make(map[string]any, len(usage))
	for k, v := range usage {
		startUsage[k] = v
	}
	startUsage["output_tokens"] = 1
	if !send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": startUsage,
	}}) {
		return StatusClientClosed
	}
	if !send("ping", map[string]any{"type": "ping"}) {
		return StatusClientClosed
	}
	for i, b := range rp.Content {
		if !send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": blockJSON(b, false)}) {
			return StatusClientClosed
		}
		if rp.Hang {
			s.hang(ctx)
			return StatusClientClosed
		}
		for _, d := range deltas(b) {
			if !send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d}) {
				return StatusClientClosed
			}
		}
		if !send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i}) {
			return StatusClientClosed
		}
	}
	if rp.StreamError != "" {
		send("error", errBody(rp.StreamError, "fakeapi scripted stream error "+rp.StreamError))
		return http.StatusOK
	}
	if !send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": rp.StopReason, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": outTok}}) {
		return StatusClientClosed
	}
	send("message_stop", map[string]any{"type": "message_stop"})
	return http.StatusOK
}

// blockJSON renders a block; full=false gives the empty shell sent in
// content_block_start.
func blockJSON(b Block, full bool) map[string]any {
	switch b.Type {
	case BlockThinking:
		if full {
			return map[string]any{"type": "thinking", "thinking": b.Thinking, "signature": b.Signature}
		}
		return map[string]any{"type": "thinking", "thinking": "", "signature": ""}
	case BlockRedactedThinking:
		return map[string]any{"type": "redacted_thinking", "data": b.Data}
	case BlockToolUse, BlockServerToolUse:
		if full {
			return map[string]any{"type": string(b.Type), "id": b.ID, "name": b.Name, "input": b.Input}
		}
		return map[string]any{"type": string(b.Type), "id": b.ID, "name": b.Name, "input": map[string]any{}}
	case BlockRaw:
		var m map[string]any
		_ = json.Unmarshal(b.Raw, &m) // validated with the script
		return m
	default:
		if full {
			return map[string]any{"type": "text", "text": b.Text}
		}
		return map[string]any{"type": "text", "text": ""}
	}
}

// chunks splits s into pieces of about n bytes without cutting a UTF-8
// sequence.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		k := n
		for k < len(s) && !utf8.RuneStart(s[k]) {
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func deltas(b Block) []map[string]any {
	var out []map[string]any
	switch b.Type {
	case BlockThinking:
		for _, c := range chunks(b.Thinking, deltaBytes) {
			out = append(out, map[string]any{"type": "thinking_delta", "thinking": c})
		}
		out = append(out, map[string]any{"type": "signature_delta", "signature": b.Signature})
	case BlockRedactedThinking, BlockRaw:
	case BlockToolUse, BlockServerToolUse:
		for _, c := range chunks(string(b.Input), deltaBytes) {
			out = append(out, map[string]any{"type": "input_json_delta", "partial_json": c})
		}
	default:
		for _, c := range chunks(b.Text, deltaBytes) {
			out = append(out, map[string]any{"type": "text_delta", "text": c})
		}
	}
	return out
}
