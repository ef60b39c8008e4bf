package webhook

import (
	"io"
	"net/http"
	"sync"
	"time"
)

// answer writes a short plain-text answer and counts the delivery.
func (h *Handler) answer(w http.ResponseWriter, trigger, result string, code int, msg string) {
	if h.opt.Observe != nil {
		h.opt.Observe.WebhookDelivery(trigger, result)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, msg+"\n")
}

// refuse answers a delivery that does not run, logging it within the
// trigger's allowance.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, trigger, result string, code int, reason string) {
	if n, ok := h.limiter.allow(trigger, h.opt.Now()); ok {
		h.opt.Log.Warn().Str("trigger", trigger).Str("result", result).Int("status", code).Str("reason", reason).
			Str("remote", r.RemoteAddr).Int("not_logged_since", n).Msg("webhook delivery refused")
	}
	h.answer(w, trigger, result, code, reason)
}

// fail answers 500 for an error on untether's side; the sender learns
// nothing of it but that.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, trigger string, err error) {
	if n, ok := h.limiter.allow(trigger, h.opt.Now()); ok {
		h.opt.Log.Error().Err(err).Str("trigger", trigger).Str("remote", r.RemoteAddr).Int("not_logged_since", n).
			Msg("webhook delivery failed")
	}
	h.answer(w, trigger, ResultFailed, http.StatusInternalServerError, "untether could not take the delivery")
}

// logEvery is how often a trigger's refusals are logged.
const logEvery = time.Minute

// logLimiter allows one log line per trigger per logEvery and counts the
// ones it holds back. Its keys are configured names and UnknownTrigger,
// so it stays small whatever names strangers try.
type logLimiter struct {
	mu   sync.Mutex
	last map[string]*allowance
}

type allowance struct {
	at      time.Time
	skipped int
}

// allow reports whether trigger may log at now, and how many lines it
// held back since the last one.
func (l *logLimiter) allow(trigger string, now time.Time) (skipped int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[string]*allowance{}
	}
	a := l.last[trigger]
	if a == nil {
		l.last[trigger] = &allowance{at: now}
		return 0, true
	}
	if now.Sub(a.at) < logEvery {
		a.skipped++
		return 0, false
	}
	skipped = a.skipped
	a.at, a.skipped = now, 0
	return skipped, true
}
