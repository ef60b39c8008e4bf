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
// a long outage would hold the answer up to 30 s after recovery. So the
// first successful call anywhere (a send in another chat, the bridge's
// getUpdates through [Outbox.Reachable], or the outbox's own probe) ends
// every chat's backoff at once.

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

// recovery tracks the chats whose backoff a success would end.
type recovery struct {
	// clearable counts chats in a failure streak whose backoff has not
	// been ended early yet. Ended once per streak: a chat that fails
	// again right after (a fault of its own, or a flapping Telegram)
	// keeps its backoff instead of retrying on every success elsewhere.
	clearable atomic.Int32
	probing   atomic.Bool
	kick      chan struct{} // wakes the prober when nothing is left to probe for
}

func (c *chat) clearable() bool { return c.failures > 0 && !c.cleared }

// track adjusts the count after c's clearable state may have changed from
// was. Called with c.mu held.
func (o *Outbox) track(c *chat, was bool) {
	switch now := c.clearable(); {
	case now && !was:
		o.rec.clearable.Add(1)
	case !now && was:
		if o.rec.clearable.Add(-1) == 0 {
			select {
			case o.rec.kick <- struct{}{}:
			default:
			}
		}
	}
}

// Reachable tells the outbox that Telegram answered a call, as the bridge
// does whenever getUpdates succeeds: every chat backing off after network
// errors or 5xx answers retries now, high priority first and within the
// flood limits. 429 pauses are not affected. It is cheap when nothing is
// backing off.
func (o *Outbox) Reachable() {
	if o.rec.clearable.Load() == 0 {
		return
	}
	for _, c := range o.allChats(false) {
		c.mu.Lock()
		if was := c.clearable(); was {
			c.cleared = true
			c.retryLow, c.retryHigh = time.Time{}, time.Time{}
			o.track(c, was)
			c.signal()
		}
		c.mu.Unlock()
	}
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

// probe calls getMe every ProbeInterval (without waiting for a hanging
// one) until one succeeds or no chat is backing off any more.
func (o *Outbox) probe(p prober) {
	defer o.wg.Done()
	for {
		o.probeUntilUp(p)
		o.rec.probing.Store(false)
		// A chat that started failing while the loop was ending found
		// the prober still running; look again.
		if o.rec.clearable.Load() == 0 || o.runCtx.Err() != nil || !o.rec.probing.CompareAndSwap(false, true) {
			return
		}
	}
}

func (o *Outbox) probeUntilUp(p prober) {
	ctx, cancel := context.WithCancel(o.runCtx)
	var probes sync.WaitGroup
	defer probes.Wait()
	defer cancel() // ends hanging probes once the loop is done
	up := make(chan struct{}, 1)
	var inflight atomic.Int32
	for o.rec.clearable.Load() > 0 {
		if inflight.Load() < maxProbes {
			inflight.Add(1)
			probes.Add(1)
			go func() {
				defer probes.Done()
				defer inflight.Add(-1)
				pctx, pcancel := context.WithTimeout(ctx, probeTimeout)
				defer pcancel()
				if _, err := p.GetMe(pctx); err == nil {
					select {
					case up <- struct{}{}:
					default:
					}
				}
			}()
		}
		select {
		case <-up:
			o.Reachable()
			return
		case <-o.rec.kick:
		case <-o.clock.After(o.opt.ProbeInterval):
		case <-ctx.Done():
			return
		}
	}
}
