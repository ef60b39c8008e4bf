package telegramtest

import (
	"net/http"
	"strings"
	"time"
)

// Rate is "at most N events in any window of length Per".
type Rate struct {
	N   int
	Per time.Duration
}

// Bucket is a token bucket: Burst calls at once, then one more per Every.
// It holds at most Burst, so a chat that sends faster than one per Every
// for long runs dry however it spaces its calls.
type Bucket struct {
	Burst int
	Every time.Duration
}

// FloodLimits configures flood-control emulation. Only sends and edits
// (sendMessage, sendDocument, sendPhoto, sendMediaGroup, editMessageText,
// editMessageReplyMarkup) use up the limits; once a chat is penalised, every
// method naming that chat gets 429 until the penalty ends, which is
// stricter than Telegram on purpose.
type FloodLimits struct {
	Private Rate // per private chat, as a window (the strict model)
	// PrivateBucket limits each private chat as a token bucket (the
	// default model). When both are set, a call must pass both.
	PrivateBucket Bucket
	Group         Rate // per group or supergroup; sends and edits share it
	Global        Rate // across all chats
	// ExtendPenalty restarts the penalty when a penalised chat is called
	// early, as Telegram has been seen to do.
	ExtendPenalty bool
}

// DefaultFloodLimits is the fake's model of Telegram, from the evidence
// BENCHMARKS.md ("The flood model") cites: a private chat may burst (8
// calls at once) and then sustain one a second, the Bot FAQ's "about one
// message per second, short bursts allowed"; a group takes 20 per minute;
// all chats together 30 per second. Telegram publishes no burst size: 8 is
// the fake's choice, above what the outbox spends (6), so a test that meets
// a 429 here has found a pacing bug, not the model's edge.
func DefaultFloodLimits() FloodLimits {
	return FloodLimits{
		PrivateBucket: Bucket{Burst: 8, Every: time.Second},
		Group:         Rate{N: 20, Per: time.Minute},
		Global:        Rate{N: 30, Per: time.Second},
	}
}

// StrictFloodLimits is a stricter reading of the same FAQ: at most 3 calls
// in any 3 s of a private chat, so a long answer's fourth part or a burst
// after progress edits draws a 429. Tests that need Telegram to refuse
// bursts use it, and the benchmarks use it to show that nothing is lost
// when Telegram is stricter than the default model.
func StrictFloodLimits() FloodLimits {
	l := DefaultFloodLimits()
	l.PrivateBucket = Bucket{}
	l.Private = Rate{N: 3, Per: 3 * time.Second}
	return l
}

var floodCounted = map[string]bool{
	"sendmessage": true, "senddocument": true, "editmessagetext": true, "editmessagereplymarkup": true,
	"sendphoto": true, "sendmediagroup": true,
}

type floodState struct {
	limits FloodLimits
	global []time.Time
	chats  map[ChatID]*chatFlood
}

type chatFlood struct {
	events  []time.Time
	full    time.Time // PrivateBucket: when the bucket is full again (GCRA's theoretical arrival time)
	until   time.Time
	penalty time.Duration
}

func newFloodState(l FloodLimits) *floodState {
	return &floodState{limits: l, chats: map[ChatID]*chatFlood{}}
}

// EnableFloodControl turns on flood-control emulation with fresh windows.
func (s *Server) EnableFloodControl(l FloodLimits) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flood = newFloodState(l)
}

// DisableFloodControl turns flood-control emulation off.
func (s *Server) DisableFloodControl() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flood = nil
}

// checkFloodLocked runs after validation and before a method takes effect.
func (s *Server) checkFloodLocked(c *chatState, method string) *apiError {
	if s.flood == nil {
		return nil
	}
	now := s.now()
	cf := s.flood.chats[c.ID]
	if cf == nil {
		cf = &chatFlood{}
		s.flood.chats[c.ID] = cf
	}
	if now.Before(cf.until) {
		if s.flood.limits.ExtendPenalty {
			cf.until = now.Add(cf.penalty)
		}
		return tooManyRequests(ceilSeconds(cf.until.Sub(now)))
	}
	if !floodCounted[strings.ToLower(method)] {
		return nil
	}
	l := s.flood.limits
	rate, bucket := l.Group, Bucket{}
	if c.Type == Private {
		rate, bucket = l.Private, l.PrivateBucket
	}
	var wait time.Duration
	cf.events = prune(cf.events, rate.Per, now)
	s.flood.global = prune(s.flood.global, l.Global.Per, now)
	if rate.N > 0 && len(cf.events) >= rate.N {
		wait = cf.events[len(cf.events)-rate.N].Add(rate.Per).Sub(now)
	}
	full := cf.full
	if full.Before(now) {
		full = now
	}
	if bucket.Burst > 0 && bucket.Every > 0 {
		// The call needs one token: the bucket may be short of full by at
		// most Burst-1 of them.
		wait = max(wait, full.Sub(now)-time.Duration(bucket.Burst-1)*bucket.Every)
	}
	if g := l.Global; g.N > 0 && len(s.flood.global) >= g.N {
		wait = max(wait, s.flood.global[len(s.flood.global)-g.N].Add(g.Per).Sub(now))
	}
	if wait > 0 {
		secs := ceilSeconds(wait)
		cf.penalty = time.Duration(secs) * time.Second
		cf.until = now.Add(cf.penalty)
		return tooManyRequests(secs)
	}
	cf.events = append(cf.events, now)
	if bucket.Burst > 0 && bucket.Every > 0 {
		cf.full = full.Add(bucket.Every)
	}
	s.flood.global = append(s.flood.global, now)
	return nil
}

func prune(ts []time.Time, per time.Duration, now time.Time) []time.Time {
	i := 0
	for i < len(ts) && !ts[i].Add(per).After(now) {
		i++
	}
	return ts[i:]
}

func ceilSeconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}

// Fault is an injected failure. With Drop the connection is closed without
// a response; with Body that text is written verbatim (non-JSON bodies,
// proxies' HTML error pages) using Code as the HTTP status; otherwise a Bot
// API error envelope with Code, Description and the optional parameters is
// returned.
type Fault struct {
	Code        int
	Description string
	RetryAfter  int
	MigrateTo   ChatID
	Drop        bool
	Body        string
}

type fault struct {
	method    string // lower-cased; "" matches every method
	pred      func(Call) bool
	remaining int // <0: until removed
	f         Fault
}

// FailNext makes the next n calls of method fail with code and description.
// An empty description is filled in with Telegram's wording for the code;
// retryAfter lands in parameters.retry_after.
func (s *Server) FailNext(method string, n, code int, desc string, retryAfter int) {
	s.FailNextWith(method, n, Fault{Code: code, Description: desc, RetryAfter: retryAfter})
}

// FailNextWith makes the next n calls of method (any method if "") fail with f.
func (s *Server) FailNextWith(method string, n int, f Fault) {
	s.addFault(&fault{method: strings.ToLower(method), remaining: n, f: f})
}

// FailWhen fails every call for which pred returns true until the returned
// function is called. pred sees the call's method, chat and parameters.
func (s *Server) FailWhen(pred func(Call) bool, f Fault) (stop func()) {
	ft := &fault{pred: pred, remaining: -1, f: f}
	s.addFault(ft)
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		ft.remaining = 0
	}
}

// DropConnection closes the connection of the next n calls of method without
// writing a response, as a crashed proxy would.
func (s *Server) DropConnection(method string, n int) {
	s.FailNextWith(method, n, Fault{Drop: true})
}

// Delay holds every call of method for d of real time before handling it;
// d <= 0 removes the delay.
func (s *Server) Delay(method string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d <= 0 {
		delete(s.delays, strings.ToLower(method))
		return
	}
	s.delays[strings.ToLower(method)] = d
}

// DelayAnswer holds the answer to every call of method for d of real time
// after the call took effect: users see a sent message while the bot still
// waits for its id, as on a slow link. d <= 0 removes the delay.
func (s *Server) DelayAnswer(method string, d time.Duration) { s.Delay(answerDelayPrefix+method, d) }

// answerDelayPrefix keys DelayAnswer's delays beside Delay's.
const answerDelayPrefix = "answer:"

func (s *Server) delayFor(method string) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.delays[strings.ToLower(method)]
}

func (s *Server) addFault(f *fault) {
	if f.f.Description == "" && !f.f.Drop && f.f.Body == "" {
		f.f.Description = defaultDescription(f.f.Code, f.f.RetryAfter)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f)
}

func defaultDescription(code, retryAfter int) string {
	switch code {
	case http.StatusTooManyRequests:
		return tooManyRequests(retryAfter).desc
	case http.StatusUnauthorized:
		return "Unauthorized"
	case http.StatusForbidden:
		return "Forbidden: bot was blocked by the user"
	case http.StatusConflict:
		return conflictPoller
	case http.StatusBadRequest:
		return "Bad Request"
	}
	return http.StatusText(code)
}

func (s *Server) takeFault(idx int) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	call := s.calls[idx]
	method := strings.ToLower(call.Method)
	for _, f := range s.faults {
		if f.remaining == 0 || f.method != "" && f.method != method || f.pred != nil && !f.pred(call) {
			continue
		}
		if f.remaining > 0 {
			f.remaining--
		}
		return f.f, true
	}
	return Fault{}, false
}

func (s *Server) applyFault(w http.ResponseWriter, idx int, f Fault) {
	switch {
	case f.Drop:
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				s.finishCall(idx, 0, "connection dropped", 0)
				return
			}
		}
		panic(http.ErrAbortHandler) // closes the connection on any server
	case f.Body != "":
		code := f.Code
		if code == 0 {
			code = http.StatusBadGateway
		}
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(f.Body))
		s.finishCall(idx, code, f.Body, 0)
	default:
		s.respond(w, idx, nil, &apiError{code: f.Code, desc: f.Description, retryAfter: f.RetryAfter, migrateTo: f.MigrateTo})
	}
}

// Violation is a call made to a chat while a 429 told the bot to wait.
type Violation struct {
	Call    Call      // the early call
	Penalty Call      // the 429 response that imposed the wait
	Until   time.Time // when the wait ended
}

// ViolationsOfRetryAfter lists calls naming a chat that arrived after a 429
// for that chat had been answered and before its retry_after elapsed (fake
// clock). Calls already in flight when the 429 was written do not count.
func (s *Server) ViolationsOfRetryAfter() []Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Violation
	for _, c := range s.calls {
		if c.Chat == 0 {
			continue
		}
		var (
			penalty Call
			found   bool
		)
		for _, p := range s.calls {
			if p.Chat == c.Chat && p.RetryAfter > 0 && p.doneSeq != 0 && p.doneSeq < c.arriveSeq &&
				(!found || p.doneSeq > penalty.doneSeq) {
				penalty, found = p, true
			}
		}
		if !found {
			continue
		}
		until := penalty.Time.Add(time.Duration(penalty.RetryAfter) * time.Second)
		if c.Time.Before(until) {
			out = append(out, Violation{Call: c, Penalty: penalty, Until: until})
		}
	}
	return out
}
