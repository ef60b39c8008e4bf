package httpd

import (
	"errors"
	"net/http"
	"strconv"
)

// limits wraps h with the per-request limits, outermost first: the
// concurrency slots (a refused request costs nothing), the body cap (on
// the real ResponseWriter, so a body over it also closes the connection),
// then the handler's time.
func (s *Server) limits(h http.Handler) http.Handler {
	h = http.TimeoutHandler(h, s.opt.HandlerTimeout, "the request took too long\n")
	h = bodyCap(s.opt.MaxBodyBytes, h)
	return s.slots(h)
}

// busyRetryAfter is the Retry-After of a request refused for lack of a
// slot: handlers are short, so a second is plenty.
const busyRetryAfter = "1"

// slots admits at most MaxConcurrent requests into next at once and
// answers the others 503 at once: queuing them would let a flood hold
// memory and connections.
func (s *Server) slots(next http.Handler) http.Handler {
	sem := make(chan struct{}, s.opt.MaxConcurrent)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case sem <- struct{}{}:
			defer func() { <-sem }()
			next.ServeHTTP(w, r)
		default:
			if s.opt.OnBusy != nil {
				s.opt.OnBusy()
			}
			w.Header().Set("Retry-After", busyRetryAfter)
			http.Error(w, "busy, try again", http.StatusServiceUnavailable)
		}
	})
}

// bodyCap refuses a body whose Content-Length is over max before reading
// it, and caps any other body at max bytes.
func bodyCap(max int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			w.Header().Set("Connection", "close") // do not read what was refused
			http.Error(w, "request body larger than "+strconv.FormatInt(max, 10)+" bytes", http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, max)
		next.ServeHTTP(w, r)
	})
}

// TooLarge reports whether err, from reading a request's body, means the
// body was over the cap: the handler should answer 413.
func TooLarge(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}
