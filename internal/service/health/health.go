package health

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"time"
)

// Liveness is whether the daemon makes progress; nil while it does. It
// is what the systemd watchdog is fed by: (*bridge.Bridge).Healthy fits.
// Its error's text is shown by /healthz unless the error is Private.
type Liveness interface {
	Healthy(now time.Time) error
}

// Private is an error whose text is for the operator alone (it names a
// chat, say): /healthz, which anyone reaching the listener may ask, shows
// its Public text instead. It is found with errors.As, so it may be
// wrapped.
type Private interface {
	error
	Public() string
}

// Readiness is whether the daemon takes new work; nil while it does. Gate
// is one.
type Readiness interface {
	Ready() error
}

// Degradation lists trouble that leaves the daemon alive: shown by
// /healthz, never failing it. Conditions is one.
type Degradation interface {
	Degraded(now time.Time) []string
}

// Healthz answers /healthz from live, adding what degraded (may be nil)
// reports. now is the clock (time.Now).
func Healthz(live Liveness, degraded Degradation, now func() time.Time) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		t := now()
		var lines []string
		if degraded != nil {
			for _, d := range degraded.Degraded(t) {
				lines = append(lines, "degraded: "+d)
			}
		}
		if err := live.Healthy(t); err != nil {
			write(w, http.StatusServiceUnavailable, append([]string{"unhealthy: " + oneLine(public(err))}, lines...))
			return
		}
		write(w, http.StatusOK, append([]string{"ok"}, lines...))
	})
}

// Readyz answers /readyz from ready.
func Readyz(ready Readiness) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if err := ready.Ready(); err != nil {
			write(w, http.StatusServiceUnavailable, []string{"not ready: " + oneLine(err.Error())})
			return
		}
		write(w, http.StatusOK, []string{"ready"})
	})
}

func write(w http.ResponseWriter, code int, lines []string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, strings.Join(lines, "\n")+"\n")
}

// public is err's text as anyone may read it.
func public(err error) string {
	var p Private
	if errors.As(err, &p) {
		return p.Public()
	}
	return err.Error()
}

// oneLine keeps a reason on its line: one line per finding.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
