package outbox

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-telegram/bot/models"
)

// Recovery from an outage. Each chat backs off on its own after transport
// errors and 5xx answers, but how long Telegram was down must not decide
// how long the user waits once it is back: a backoff grown to 30 s during
// a long outage would hold the answer up to 30 s after recovery. So a
// successful call anywhere (a call of another chat, the bridge's
// getUpdates through [Outbox.Reachable], or the outbox's own probe) ends
// the backoff of every chat whose failure came before that call was sent.

// CallMark says when a call to Telegram was sent, relative to the failures
// the outbox has seen. Only failures from before a call was sent are
// disproved by its success: a long poll sent before an outage may still
// come back fine in the middle of it.
type CallMark uint64

// prober is the optional part of [API] the outbox probes Telegram with
// while calls fail; *bot.Bot has it. getMe changes nothing, so probing
// cannot duplicate a message, unlike retrying a send early.
type prober interface {
	GetMe(ctx context.Context) (*models.User, error)
}

const (
	// probeTimeout bounds one probe; a probe that hangs does not hold up
	// the next one, up to maxProbes at a time.
	probeTimeout = 10 * time.Second
	maxProbes    = 3
)

type recovery struct {
	epoch   atomic.Uint64 // transport failures so far; a CallMark is a value of it
	okAfter atomic.Uint64 // 1 + the mark of the latest successful call; 0: none
	failing atomic.Int32  // chats with failures > 0
	probing atomic.Bool
	kick    chan struct{} // wakes the prober when no chat fails any more
}

// CallStarted returns the mark of a call about to be sent; pass it to
// [Outbox.Reachable] if the call succeeds.
func (o *Outbox) CallStarted() CallMark { return CallMark(o.rec.epoch.Load()) }

// Reachable tells the outbox that Telegram answered a call sent at mark
// (see [Outbox.CallStarted]), as the bridge does whenever getUpdates
// succeeds: every chat backing off after network errors or 5xx answers
// that failed before that call was sent retries now, high priority first
// and within the flood limits. 429 pauses are not affected. A chat's
// backoff is ended early at most once per HighBackoffMax, so a chat whose
// calls fail for reasons of its own does not retry at the pace of every
// other chat's successes. It is cheap when nothing is backing off.
func (o *Outbox) Reachable(mark CallMark) {
	for ok := uint64(mark) + 1; ; {
		old := o.rec.okAfter.Load()
		if old >= ok || o.rec.okAfter.CompareAndSwap(old, ok) {
			break
		}
	}
	if o.rec.failing.Load() == 0 {
		return
	}
	now := o.clock.Now()
	for _, c := range o.allChats(false) {
		c.mu.Lock()
		if c.failures > 0 && c.failMark <= uint64(mark) &&
			(c.clearedAt.IsZero() || !now.Before(c.clearedAt.Add(o.opt.HighBackoffMax))) {
			c.retryHigh, c.retryLow, c.clearedAt = time.Time{}, time.Time{}, now
			c.signal()
		}
		c.mu.Unlock()
	}
}

// failed records a transport failure of c. Called with c.mu held.
func (o *Outbox) failed(c *chat) {
	if c.failures == 0 {
		o.rec.failing.Add(1)
	}
	c.failures++
	c.failMark = o.rec.epoch.Add(1)
}

// reached records that a call of c got an answer from Telegram: its
// failure streak is over. Called with c.mu held.
func (o *Outbox) reached(c *chat) {
	if c.failures > 0 {
		c.failures = 0
		if o.rec.failing.Add(-1) == 0 {
			select {
			case o.rec.kick <- struct{}{}:
			default:
			}
		}
	}
	c.retryHigh, c.retryLow, c.clearedAt = time.Time{}, time.Time{}, time.Time{}
}

// startProber probes Telegram while chats back off, if the API can.
func (o *Outbox) startProber() {
	p, ok := o.api.(prober)
	if !ok || !o.rec.probing.CompareAndSwap(false, true) {
		return
	}
	o.wg.Add(1)
	go o.probe(p)
}

// probe calls getMe every ProbeInterval, without waiting for a hanging one,
// while any chat fails and no call sent since the latest failure has
// succeeded.
func (o *Outbox) probe(p prober) {
	defer o.wg.Done()
	for {
		o.probeWhileFailing(p)
		o.rec.probing.Store(false)
		// A chat that started failing while the loop was ending found
		// the prober still running; look again.
		if o.rec.failing.Load() == 0 || o.runCtx.Err() != nil || !o.rec.probing.CompareAndSwap(false, true) {
			return
		}
	}
}

func (o *Outbox) probeWhileFailing(p prober) {
	ctx, cancel := context.WithCancel(o.runCtx)
	var probes sync.WaitGroup
	defer probes.Wait()
	defer cancel() // ends hanging probes once the loop is done
	var inflight atomic.Int32
	for o.rec.failing.Load() > 0 {
		// No probe is needed while a call sent after the latest failure
		// has succeeded: Telegram is up, the chats are just backing off.
		up := o.rec.okAfter.Load() > o.rec.epoch.Load()
		if !up && inflight.Load() < maxProbes {
			inflight.Add(1)
			probes.Add(1)
			go func() {
				defer probes.Done()
				defer inflight.Add(-1)
				pctx, pcancel := context.WithTimeout(ctx, probeTimeout)
				defer pcancel()
				mark := o.CallStarted()
				if _, err := p.GetMe(pctx); err == nil {
					o.Reachable(mark)
				}
			}()
		}
		select {
		case <-o.rec.kick:
		case <-o.clock.After(o.opt.ProbeInterval):
		case <-ctx.Done():
			return
		}
	}
}
