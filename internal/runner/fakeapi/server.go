package fakeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// loopbackAddr is the only address a Server listens on: the fake must never
// be reachable from, or reach, anything but the local machine.
const loopbackAddr = "127.0.0.1:0"

// Server is a running fake Messages API. All methods are safe for concurrent
// use.
type Server struct {
	srv       *http.Server
	url       string
	serveDone chan struct{} // closed when Serve returns
	done      chan struct{} // closed by Close: releases delayed and hanging replies
	handlers  sync.WaitGroup
	closeOnce sync.Once
	closeErr  error

	mu      sync.Mutex
	closed  bool
	script  Script
	counts  []int // replies given per rule, parallel to script.Rules
	log     []Request
	changed chan struct{} // closed and replaced whenever log changes
	idN     int
}

// Start validates script and starts a server on 127.0.0.1 with a free port.
// Close stops it.
func Start(script Script) (*Server, error) {
	if err := script.Validate(); err != nil {
		return nil, fmt.Errorf("start fakeapi: %w", err)
	}
	ln, err := net.Listen("tcp", loopbackAddr)
	if err != nil {
		return nil, fmt.Errorf("start fakeapi: listen on %s: %w", loopbackAddr, err)
	}
	s := &Server{
		url:       "http://" + ln.Addr().String(),
		serveDone: make(chan struct{}),
		done:      make(chan struct{}),
		script:    script,
		counts:    make([]int, len(script.Rules)),
		changed:   make(chan struct{}),
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: time.Minute}
	go func() {
		defer close(s.serveDone)
		// Serve always returns an error; after Close it is ErrServerClosed.
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// New starts a server for a test and closes it in t.Cleanup; an invalid
// script fails the test.
func New(t testing.TB, script Script) *Server {
	t.Helper()
	s, err := Start(script)
	if err != nil {
		t.Fatalf("fakeapi.New: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close fakeapi: %v", err)
		}
	})
	return s
}

// Close stops the server: it releases hanging and delayed replies, closes all
// connections and waits for every handler to return. Later calls return the
// first call's result.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		close(s.done)
		if err := s.srv.Close(); err != nil {
			s.closeErr = fmt.Errorf("close fakeapi http server: %w", err)
		}
		s.handlers.Wait()
		<-s.serveDone
	})
	return s.closeErr
}

// URL is the base URL, "http://127.0.0.1:PORT", for ANTHROPIC_BASE_URL.
func (s *Server) URL() string { return s.url }

// SetScript replaces the script, e.g. between turns. Every rule's reply
// counter starts again from zero (the new rules are new rules, even if some
// are equal to old ones); the request log is kept. Requests already being
// answered finish with the reply they were given.
func (s *Server) SetScript(script Script) error {
	if err := script.Validate(); err != nil {
		return fmt.Errorf("set fakeapi script: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = script
	s.counts = make([]int, len(script.Rules))
	return nil
}

// Requests returns a copy of the request log, in arrival order. The Header,
// Body and JSON of the entries are shared with the log: do not modify them.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// ModelCalls returns the logged model calls only (see Request.IsModelCall).
func (s *Server) ModelCalls() []Request { return modelCalls(s.Requests()) }

func modelCalls(reqs []Request) []Request {
	var out []Request
	for _, r := range reqs {
		if r.IsModelCall() {
			out = append(out, r)
		}
	}
	return out
}

// WaitFor blocks until cond holds for the request log (checked now and after
// every change: a new request, or a reply that finished) or ctx ends. It
// returns the log cond was last checked against; on ctx's end the error wraps
// ctx.Err().
func (s *Server) WaitFor(ctx context.Context, cond func([]Request) bool) ([]Request, error) {
	for {
		s.mu.Lock()
		reqs := append([]Request(nil), s.log...)
		changed := s.changed
		s.mu.Unlock()
		if cond(reqs) {
			return reqs, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return reqs, fmt.Errorf("wait for fakeapi requests (%d logged so far): %w", len(reqs), ctx.Err())
		}
	}
}

// WaitForRequests blocks until at least n requests (of any kind) have
// arrived, or ctx ends, and returns the whole log.
func (s *Server) WaitForRequests(ctx context.Context, n int) ([]Request, error) {
	return s.WaitFor(ctx, func(r []Request) bool { return len(r) >= n })
}

// WaitForModelCalls blocks until at least n model calls have arrived (their
// replies may still be streaming), or ctx ends, and returns the model calls.
func (s *Server) WaitForModelCalls(ctx context.Context, n int) ([]Request, error) {
	reqs, err := s.WaitFor(ctx, func(r []Request) bool { return len(modelCalls(r)) >= n })
	return modelCalls(reqs), err
}

// notifyLocked wakes every WaitFor; s.mu must be held.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// appendLocked logs req, giving it its sequence number; s.mu must be held.
func (s *Server) appendLocked(req Request) int {
	req.Seq = len(s.log) + 1
	s.log = append(s.log, req)
	s.notifyLocked()
	return req.Seq
}

func (s *Server) record(req Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendLocked(req)
}

func (s *Server) finish(seq, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log[seq-1].Status = status
	s.notifyLocked()
}

func (s *Server) nextIDLocked(prefix string) string {
	s.idN++
	return fmt.Sprintf("%s_fake%016d", prefix, s.idN)
}

// ServeHTTP answers one request and logs it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "fakeapi: closed", http.StatusServiceUnavailable)
		return
	}
	s.handlers.Add(1)
	s.mu.Unlock()
	defer s.handlers.Done()

	body, err := io.ReadAll(r.Body)
	req := Request{
		Time: time.Now().UTC(), Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
		Header: r.Header.Clone(), Body: body, RuleIndex: -1,
	}
	var obj map[string]any
	if err == nil && json.Unmarshal(body, &obj) == nil {
		req.JSON = obj
	}

	// endpoint answers a request the script has no say in.
	endpoint := func(label string, status int, v any) {
		req.Rule = label
		seq := s.record(req)
		w.Header().Set("request-id", requestID(seq))
		writeJSON(w, status, v)
		s.finish(seq, status)
	}
	switch {
	case err != nil:
		endpoint("bad-body", http.StatusBadRequest, errBody("invalid_request_error", "fakeapi: reading body: "+err.Error()))
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		// Rough: one token per 4 bytes; the CLI does not call it offline.
		endpoint("count_tokens", http.StatusOK, map[string]any{"input_tokens": len(body)/4 + 1})
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		endpoint("models", http.StatusOK, modelsBody)
	case r.URL.Path == "/api/hello":
		// The connectivity preflight the CLI sends (HEAD) when nonessential
		// traffic is not disabled.
		endpoint("hello", http.StatusOK, map[string]any{})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		mb, perr := parseMessagesBody(body)
		if perr != nil || req.JSON == nil {
			endpoint("bad-json", http.StatusBadRequest, errBody("invalid_request_error", "fakeapi: body is not a Messages request"))
			return
		}
		s.mu.Lock()
		rp, ruleIdx, replyIdx, name := s.pickLocked(r.URL.Path, mb)
		rp = s.prepareLocked(rp, mb, body)
		req.Rule, req.RuleIndex, req.ReplyIndex, req.Reply = name, ruleIdx, replyIdx, &rp
		seq := s.appendLocked(req)
		msgID := s.nextIDLocked("msg")
		s.mu.Unlock()
		w.Header().Set("request-id", requestID(seq))
		status := s.answer(w, r, mb, rp, msgID)
		s.finish(seq, status)
		if status == StatusClientClosed {
			// Drop the connection instead of letting net/http end the
			// response cleanly: a hang or delay cut short by Close must look
			// like a dead server, and a half-sent stream must not look
			// complete.
			panic(http.ErrAbortHandler)
		}
	default:
		endpoint("unknown-endpoint", http.StatusNotFound, errBody("not_found_error", "fakeapi: no such endpoint "+r.URL.Path))
	}
}

// pickLocked chooses the reply for a messages request and advances the
// answering rule's counter; s.mu must be held.
func (s *Server) pickLocked(path string, mb messagesBody) (rp Reply, ruleIdx, replyIdx int, name string) {
	for i, ru := range s.script.Rules {
		want := ru.When.Path
		if want == "" {
			want = "/v1/messages"
		}
		if want != path || !ru.When.matches(mb) {
			continue
		}
		k := s.counts[i]
		if k >= len(ru.Replies) {
			if ru.Once {
				continue
			}
			k = len(ru.Replies) - 1
		}
		s.counts[i]++
		name := ru.Name
		if name == "" {
			name = fmt.Sprintf("#%d", i)
		}
		return ru.Replies[k], i, k, name
	}
	if s.script.Default != nil {
		return *s.script.Default, -1, 0, "default"
	}
	return Reply{EchoUser: true}, -1, 0, "default"
}

func requestID(seq int) string { return fmt.Sprintf("req_fake%06d", seq) }

var modelsBody = map[string]any{
	"data": []any{
		map[string]any{"type": "model", "id": "claude-sonnet-4-5-20250929", "display_name": "Claude Sonnet 4.5", "created_at": "2025-09-29T00:00:00Z"},
		map[string]any{"type": "model", "id": "claude-haiku-4-5-20251001", "display_name": "Claude Haiku 4.5", "created_at": "2025-10-01T00:00:00Z"},
	},
	"has_more": false, "first_id": "claude-sonnet-4-5-20250929", "last_id": "claude-haiku-4-5-20251001",
}

func errBody(typ, msg string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(code)
	// A write error means the client went away; there is nobody to tell.
	_ = json.NewEncoder(w).Encode(v)
}
