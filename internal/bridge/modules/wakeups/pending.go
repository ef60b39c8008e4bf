package wakeups

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/runner"
)

// While a CLI waits for wake-ups, each is kept as a pending row: a daemon
// that is killed takes its CLIs and their wake-ups with it and can tell
// nobody, so the next start finds the rows and tells the chats (Start).
// A wake-up that fires, is cancelled or expires loses its row; one a close
// loses becomes the row its ▶️ Re-arm button is for (stopped). The rows
// follow the runner's list of pending wake-ups after each event that may
// change it, and when the first one stops being awaited.

// keptKey names a pending row: the session, and the wake-up in it.
type keptKey struct {
	session string
	id      string
}

// identity tells one wake-up from another within a session: a cron job by
// its id, the loop wake-up by its time.
func identity(w runner.Wakeup) string {
	if w.Tool == "CronCreate" {
		return "cron:" + w.ID
	}
	return "loop:" + strconv.FormatInt(w.At.UnixNano(), 10)
}

// takeKept removes and returns the pending rows of session, by identity.
func (st *chatWakes) takeKept(session string) map[string]string {
	out := map[string]string{}
	for k, tok := range st.kept {
		if k.session == session {
			out[k.id] = tok
			delete(st.kept, k)
		}
	}
	return out
}

// sync makes the pending rows the live CLI's pending wake-ups.
func (m *Module) sync(c *chat.Chat) {
	st := m.state.Get(c)
	s := c.Session()
	if s == nil {
		st.known = nil
		return
	}
	st.known = s.Pending().Wakeups
	session := string(s.ID())
	want := map[string]runner.Wakeup{}
	var next time.Time
	for _, w := range st.known {
		if w.Durable {
			continue
		}
		want[identity(w)] = w
		if u := w.AwaitedUntil(); next.IsZero() || u.Before(next) {
			next = u
		}
	}
	gone := st.takeKept(session)
	if st.kept == nil {
		st.kept = map[keptKey]string{}
	}
	for id, w := range want {
		if tok, ok := gone[id]; ok {
			st.kept[keptKey{session, id}] = tok
			delete(gone, id)
			continue
		}
		if tok, ok := m.keep(c, session, w); ok {
			st.kept[keptKey{session, id}] = tok
		}
	}
	m.forget(c.Ctx(), c, gone)
	if !next.IsZero() && (st.resync.IsZero() || next.Before(st.resync)) {
		st.resync = next
		time.AfterFunc(time.Until(next)+time.Second, func() {
			c.Post(func() {
				st.resync = time.Time{}
				m.sync(c)
			})
		})
	}
}

// keep records w as pending in session.
func (m *Module) keep(c *chat.Chat, session string, w runner.Wakeup) (string, bool) {
	raw, err := json.Marshal(w)
	if err != nil {
		return "", false
	}
	pl := c.SessionPlace()
	tok := chat.NewToken()
	if err := m.store.PutLostWakeup(c.Ctx(), state.LostWakeup{Token: tok, Key: c.Key(), SessionID: session,
		Project: pl.Project, Branch: pl.Branch, Wakeup: raw, State: state.WakeupPending, CreatedAt: m.host.Now()}); err != nil {
		c.Log().Error().Err(err).Msg("keep a pending wake-up")
		return "", false
	}
	return tok, true
}

// forget deletes pending rows that fired, were cancelled or expired.
func (m *Module) forget(ctx context.Context, c *chat.Chat, toks map[string]string) {
	for _, tok := range toks {
		if err := m.store.ForgetPendingWakeup(ctx, tok); err != nil {
			c.Log().Error().Err(err).Msg("forget a pending wake-up")
		}
	}
}
