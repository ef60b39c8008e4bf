package chat

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/untether/untether/internal/bridge/durable"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// Every turn a CLI runs is charged to the chat that started it, for the
// budgets and /usage: the turns of a session the chat let go of (/new, a
// switch) as well, whose results nobody shows any more. A turn whose CLI
// died before it reported its cost (killed, crashed) is charged
// [budget] unreported_turn_usd, or what that process's --max-budget-usd
// still allowed when that is less: the CLI reports the cost only in its
// result, so nothing tells what the turn really spent, and counting
// nothing would let such turns run past every budget.

// terminalNoResult marks the turn record of a turn whose CLI died before
// its result: its cost is the estimate above.
const terminalNoResult = "no_result"

// costBook is who pays for one session's turns, and what the session's
// CLI is doing: the chat's actor keeps it while the chat shows the
// session, the goroutine that closes the session once it let go of it.
type costBook struct {
	key     state.ChatKey
	project string

	mu       sync.Mutex
	open     bool      // the CLI started a turn and has not reported it yet
	openedAt time.Time // when (wall clock)
	session  string    // the session the open turn runs in
	// capLeft is what the running process may still spend under its
	// --max-budget-usd; +Inf without a cap.
	capLeft float64
}

// openBook starts the books of a session the chat just made. The chat
// keeps them (chat.book) while it shows the session; the bridge's table
// hands them to closeDetached once it lets go.
func (b *Engine) openBook(sess *runner.Session, key state.ChatKey, project string) *costBook {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.books == nil {
		b.books = map[*runner.Session]*costBook{}
	}
	k := &costBook{key: key, project: project, capLeft: math.Inf(1)}
	b.books[sess] = k
	return k
}

// book returns the books of sess (nil for none).
func (b *Engine) book(sess *runner.Session) *costBook {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.books[sess]
}

// closeBook forgets the books of a session that has ended.
func (b *Engine) closeBook(sess *runner.Session) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.books, sess)
}

// setCap notes what the session's process may still spend under its
// --max-budget-usd (capped false: no cap).
func (k *costBook) setCap(capped bool, left float64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.capLeft = math.Inf(1)
	if capped {
		k.capLeft = left
	}
}

// started notes a turn the CLI began (system/init) in session.
func (k *costBook) started(session string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.open {
		k.open, k.openedAt = true, time.Now()
	}
	k.session = session
}

// completed notes the CLI's result of the open turn, and returns when the
// turn began (zero when the books did not see it begin).
func (k *costBook) completed(cost float64) time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	at := k.openedAt
	k.capLeft -= cost
	k.open, k.openedAt = false, time.Time{}
	return at
}

// died notes that the session's process exited, and returns the record to
// charge when it did so in the middle of a turn: the estimate, capped by
// what the process could still spend.
func (k *costBook) died(b *Engine) (state.TurnRecord, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.open {
		return state.TurnRecord{}, false
	}
	cost := min(max(b.Config().Budget.UnreportedTurnUSD, 0), max(k.capLeft, 0))
	rec := state.TurnRecord{Key: k.key, SessionID: k.session, Project: k.project, CostUSD: cost,
		TerminalReason: terminalNoResult, Duration: time.Since(k.openedAt), StartedAt: b.clockTime(k.openedAt)}
	k.open, k.openedAt = false, time.Time{}
	return rec, true
}

// follow is what the goroutine closing a detached session does with its
// events: every result is charged, and so is a turn its CLI died in.
func (k *costBook) follow(ctx context.Context, b *Engine, ev runner.Event) {
	switch e := ev.(type) {
	case runner.TurnStarted:
		k.started(string(e.SessionID))
	case runner.TurnCompleted:
		b.chargeTurn(ctx, b.turnRecord(k.key, k.project, e, k.completed(e.CostUSD)), "a session the chat let go of")
	case runner.ProcessExited:
		if rec, ok := k.died(b); ok {
			b.chargeTurn(ctx, rec, "a session the chat let go of")
		}
	}
}

// turnRecord is the record of a turn the CLI reported, in key's project,
// started at startedWall (zero: its duration before now).
func (b *Engine) turnRecord(key state.ChatKey, project string, tc runner.TurnCompleted, startedWall time.Time) state.TurnRecord {
	rec := state.TurnRecord{Key: key, SessionID: string(tc.SessionID), Duration: tc.Duration, CostUSD: tc.CostUSD,
		ContextPct: tc.ContextPercent, OK: tc.OK, TerminalReason: tc.TerminalReason, Project: project}
	rec.InputTokens = tc.Usage.InputTokens + tc.Usage.CacheCreationInputTokens + tc.Usage.CacheReadInputTokens
	rec.OutputTokens = tc.Usage.OutputTokens
	rec.CacheReadTokens, rec.CacheWriteTokens = tc.Usage.CacheReadInputTokens, tc.Usage.CacheCreationInputTokens
	if !startedWall.IsZero() {
		rec.StartedAt = b.clockTime(startedWall)
	} else {
		rec.StartedAt = b.now().Add(-tc.Duration)
	}
	return rec
}

// closeDetached ends a session the chat let go of (/new, a switch): its
// turn is interrupted and its CLI closed (with kill, killed first), while
// nobody shows its last frames. What its turns cost is still charged:
// the result the interrupt brings, or the estimate when the CLI dies
// without one. Its events are read from the start, so the interrupt's
// result is never stuck behind a full event stream.
// closed, if set, runs once the CLI is gone.
func closeDetached(b *Engine, old *runner.Session, events <-chan runner.Event, kill bool, closed func()) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(b.runCtx), time.Minute)
	defer cancel()
	book := b.book(old)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for ev := range events {
			if book != nil {
				book.follow(ctx, b, ev)
			}
		}
	}()
	if kill {
		old.Kill()
	}
	_ = old.Interrupt(ctx)
	_ = old.Close(ctx)
	select {
	case <-drained:
	case <-ctx.Done():
	}
	b.closeBook(old)
	if closed != nil {
		closed()
	}
	// The process is gone now. Its exit can come after Close ended the
	// event stream, so a turn still open died without its result.
	if book != nil {
		if rec, ok := book.died(b); ok {
			b.chargeTurn(ctx, rec, "a session the chat let go of")
		}
	}
}

// chargeTurn records a turn the chat no longer follows.
func (b *Engine) chargeTurn(ctx context.Context, rec state.TurnRecord, what string) {
	log := b.log.Info().Str("chat", rec.Key.String()).Str("session", rec.SessionID).Float64("cost_usd", rec.CostUSD)
	if rec.TerminalReason == terminalNoResult {
		log.Msg("charging the estimate for a turn whose CLI died before reporting its cost, in " + what)
	} else {
		log.Msg("charging a turn of " + what)
	}
	if err := b.store.RecordTurn(durable.WithChatKey(ctx, rec.Key), rec); err != nil {
		b.log.Error().Err(err).Str("chat", rec.Key.String()).Msg("record a turn")
	}
}

// chargeUnreported charges the chat's open turn when its CLI died before
// the result, and returns the line that says so under the crash notice
// where budgets apply ("" otherwise).
func (c *Chat) chargeUnreported() string {
	if c.book == nil {
		return ""
	}
	rec, ok := c.book.died(c.b)
	if !ok {
		return ""
	}
	c.logger().Info().Float64("cost_usd", rec.CostUSD).Msg("charging the estimate for a turn whose CLI died before reporting its cost")
	c.recordTurn(rec)
	if !c.b.Config().BudgetApplies(rec.Project) {
		return ""
	}
	return "\n💸 Claude did not report what this turn cost, so it counts as " + render.FormatCost(rec.CostUSD) +
		" against the budgets (<code>[budget] unreported_turn_usd</code>)."
}

// bookEvent keeps the live CLI's book (what its turns cost) up to date; the
// cap it runs with comes from the budget module at its start.
func (c *Chat) bookEvent(ev runner.Event) {
	book := c.book
	if book == nil {
		return
	}
	switch e := ev.(type) {
	case runner.TurnStarted:
		book.started(string(e.SessionID))
	case runner.TurnCompleted:
		book.completed(e.CostUSD)
	}
}
