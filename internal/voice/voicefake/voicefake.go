package voicefake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Path is where the endpoint listens.
const Path = "/v1/audio/transcriptions"

// Request is one transcription request as the fake read it.
type Request struct {
	Auth           string // the Authorization header
	Model          string
	Language       string
	ResponseFormat string
	FileName       string
	ContentType    string // of the file part
	Audio          []byte
	Status         int // what the fake answered
}

// Server is the fake endpoint.
type Server struct {
	srv        *httptest.Server
	key        string
	transcript func(Request) string

	mu      sync.Mutex
	reqs    []Request
	fails   []int // statuses to answer next, in order
	stall   time.Duration
	changed chan struct{}
}

// Option configures a Server.
type Option func(*Server)

// WithKey makes the fake require "Authorization: Bearer key".
func WithKey(key string) Option { return func(s *Server) { s.key = key } }

// WithTranscript sets the answer; the default is "transcript of N bytes".
func WithTranscript(f func(Request) string) Option { return func(s *Server) { s.transcript = f } }

// New starts the fake on 127.0.0.1; it stops when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{changed: make(chan struct{}),
		transcript: func(r Request) string { return fmt.Sprintf("transcript of %d bytes", len(r.Audio)) }}
	for _, o := range opts {
		o(s)
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the endpoint's full URL, as [voice] api_url takes it.
func (s *Server) URL() string { return s.srv.URL + Path }

// FailNext makes the next n requests fail with status (an OpenAI-style
// error body).
func (s *Server) FailNext(n, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.fails = append(s.fails, status)
	}
}

// Stall holds every request for d before answering (0 stops it), to let a
// client time out.
func (s *Server) Stall(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stall = d
}

// Requests returns every request so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// WaitRequests waits until n requests were answered, or fails the test.
func (s *Server) WaitRequests(t testing.TB, n int, timeout time.Duration) []Request {
	t.Helper()
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		got, ch := len(s.reqs), s.changed
		s.mu.Unlock()
		if got >= n {
			return s.Requests()
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("voicefake: %d of %d requests after %s", got, n, timeout)
		}
	}
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	req := Request{Auth: r.Header.Get("Authorization")}
	status := s.answer(w, r, &req)
	req.Status = status
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, req *Request) int {
	s.mu.Lock()
	stall := s.stall
	var fail int
	if len(s.fails) > 0 {
		fail, s.fails = s.fails[0], s.fails[1:]
	}
	s.mu.Unlock()
	switch {
	case r.Method != http.MethodPost:
		writeError(w, http.StatusMethodNotAllowed, "use POST")
		return http.StatusMethodNotAllowed
	case r.URL.Path != Path:
		writeError(w, http.StatusNotFound, "unknown path "+r.URL.Path)
		return http.StatusNotFound
	case s.key != "" && req.Auth != "Bearer "+s.key:
		writeError(w, http.StatusUnauthorized, "Incorrect API key provided.")
		return http.StatusUnauthorized
	}
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		writeError(w, http.StatusBadRequest, "the request must be multipart/form-data: "+err.Error())
		return http.StatusBadRequest
	}
	if stall > 0 {
		// After the body is read, so the server notices a client that
		// gave up.
		select {
		case <-time.After(stall):
		case <-r.Context().Done():
			return 0
		}
	}
	req.Model, req.Language, req.ResponseFormat = r.FormValue("model"), r.FormValue("language"), r.FormValue("response_format")
	f, hdr, err := r.FormFile("file")
	if err == nil {
		req.FileName, req.ContentType = hdr.Filename, hdr.Header.Get("Content-Type")
		req.Audio, err = io.ReadAll(f)
		f.Close()
	}
	switch {
	case err != nil || len(req.Audio) == 0:
		writeError(w, http.StatusBadRequest, "you must provide a non-empty 'file'")
		return http.StatusBadRequest
	case req.Model == "":
		writeError(w, http.StatusBadRequest, "you must provide a model parameter")
		return http.StatusBadRequest
	case fail != 0:
		writeError(w, fail, fmt.Sprintf("injected failure (HTTP %d)", fail))
		return fail
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"text": s.transcript(*req)})
	return http.StatusOK
}
