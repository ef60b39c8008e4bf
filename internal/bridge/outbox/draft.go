package outbox

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/rs/zerolog"
)

// DraftAPI is the call that streams a draft (Bot API 9.3+, private chats
// only). *bot.Bot satisfies it; an [API] without it gets drafts that are
// refused at once, so the caller shows the text another way.
type DraftAPI interface {
	SendMessageDraft(ctx context.Context, params *bot.SendMessageDraftParams) (bool, error)
}

var _ DraftAPI = (*bot.Bot)(nil)

// ErrDraftsUnsupported refuses drafts through an API that cannot send them.
var ErrDraftsUnsupported = errors.New("the Telegram client cannot send drafts")

// Defaults for [DraftOptions]. Telegram publishes no rate for drafts; the
// library's example streams one every 200 ms. One per chat every 400 ms
// keeps the visible text well under a second behind the model.
const (
	DefaultDraftInterval    = 400 * time.Millisecond
	DefaultDraftHold        = 100 * time.Millisecond
	DefaultDraftSettle      = time.Second
	DefaultDraftCallTimeout = 5 * time.Second
)

// DraftOptions pace drafts. Zero values select the defaults above.
type DraftOptions struct {
	// Interval is the least time between two draft calls in one chat.
	Interval time.Duration
	// Hold delays a draft's first call after its first text, so an answer
	// that is complete within it costs no draft at all.
	Hold time.Duration
	// Settle bounds how long a message send waits for the call of an ended
	// draft that is still in flight.
	Settle time.Duration
	// CallTimeout bounds one draft call; an older draft is worthless.
	CallTimeout time.Duration
}

func (d DraftOptions) withDefaults() DraftOptions {
	for _, f := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&d.Interval, DefaultDraftInterval}, {&d.Hold, DefaultDraftHold}, {&d.Settle, DefaultDraftSettle}, {&d.CallTimeout, DefaultDraftCallTimeout}} {
		if *f.v <= 0 {
			*f.v = f.def
		}
	}
	return d
}

// draftLanes is the draft side of the outbox. Drafts bypass the chat
// queues on purpose: they spend none of a chat's message budget, never wait
// behind (or hold up) an answer or an approval, and take a global slot only
// when one is spare, as typing does. Only their order relative to the answer
// is kept (settleDrafts).
type draftLanes struct {
	mu     sync.Mutex
	lanes  map[int64]*draftLane
	closed bool
	ctx    context.Context // cancelled by Close; bounds every draft call
	cancel context.CancelFunc
	wg     sync.WaitGroup // the drafts' goroutines
	nextID int64
}

// draftLane is what the drafts of one chat share: pacing, a pause after a
// 429 or a failure, Telegram's refusal, and the call in flight.
type draftLane struct {
	last    time.Time // the latest call started
	paused  time.Time
	refused error
	busy    *Draft        // whose call is in flight
	done    chan struct{} // closed when busy's call returns
	open    int           // drafts not yet ended
}

// Draft streams one reply as a Telegram draft: the chat shows it being
// written, animated, until the reply is sent as a message. The latest text
// wins; calls are paced per chat, and one that fails is not retried for its
// own sake, since newer text soon follows. A Draft is safe for concurrent
// use.
type Draft struct {
	o      *Outbox
	key    ChatKey
	id     string
	format func(string) string
	log    *zerolog.Logger
	wake   chan struct{}

	// Guarded by o.drafts.mu.
	lane    *draftLane
	text    string // the latest text shown
	sent    string // the text of the latest call
	dirty   bool   // text differs from what was sent
	since   time.Time
	ended   bool
	running bool // serve runs
	plain   bool // Telegram could not parse the HTML: send text only
	calls   int  // calls Telegram accepted
}

func (ls *draftLanes) initLocked() {
	if ls.lanes == nil {
		ls.lanes = map[int64]*draftLane{}
		ls.ctx, ls.cancel = context.WithCancel(context.Background())
		// Ids below 2^31: some clients type draft_id as a 32-bit integer.
		ls.nextID = rand.Int64N(1 << 30)
	}
}

// Draft starts a draft reply in key's chat. format turns the text given to
// [Draft.Show] into Telegram HTML when a call is made, so text shown faster
// than it can be sent is never formatted; nil sends it as is. ctx supplies
// the logger.
func (o *Outbox) Draft(ctx context.Context, key ChatKey, format func(string) string) *Draft {
	if format == nil {
		format = func(s string) string { return s }
	}
	ls := &o.drafts
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.initLocked()
	ls.sweepLocked(o.clock.Now(), o.opt.Drafts.withDefaults().Interval)
	ls.nextID++
	d := &Draft{o: o, key: key, id: strconv.FormatInt(ls.nextID%(1<<31-1)+1, 10), format: format,
		log: ctxLogger(ctx), wake: make(chan struct{}, 1)}
	ln := ls.lanes[key.Chat]
	if ln == nil {
		ln = &draftLane{}
		ls.lanes[key.Chat] = ln
	}
	if _, ok := o.api.(DraftAPI); !ok && ln.refused == nil {
		ln.refused = ErrDraftsUnsupported
	}
	d.lane = ln
	ln.open++
	if ls.closed {
		d.endLocked()
	}
	return d
}

// DraftsRefused returns why Telegram refused drafts in chat (a group, a
// client without drafts), nil if it has not.
func (o *Outbox) DraftsRefused(chat int64) error {
	ls := &o.drafts
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ln := ls.lanes[chat]; ln != nil {
		return ln.refused
	}
	return nil
}

// Show sets the draft's text; it is sent as soon as the chat's draft pacing
// allows, unless newer text replaces it first. Show never blocks. Blank
// text is not sent: Telegram refuses an empty draft.
func (d *Draft) Show(text string) {
	ls := &d.o.drafts
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if d.ended || ls.closed || d.lane.refused != nil || text == d.text {
		return
	}
	d.text, d.dirty = text, text != d.sent
	if d.since.IsZero() {
		d.since = d.o.clock.Now()
	}
	if !d.dirty {
		return
	}
	if !d.running {
		d.running = true
		ls.wg.Add(1)
		go d.serve()
		return
	}
	d.signal()
}

// End stops the draft: no call starts after End returns, and a message sent
// in the chat afterwards waits (briefly) for a call still in flight, so the
// draft cannot reappear below the answer that replaces it.
func (d *Draft) End() {
	ls := &d.o.drafts
	ls.mu.Lock()
	defer ls.mu.Unlock()
	d.endLocked()
}

func (d *Draft) endLocked() {
	if d.ended {
		return
	}
	d.ended = true
	d.lane.open--
	d.signal()
}

// Refused returns why Telegram refused drafts in the chat, nil while it
// has not: the text must then be shown another way.
func (d *Draft) Refused() error {
	ls := &d.o.drafts
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return d.lane.refused
}

// Shown reports whether Telegram accepted at least one call of the draft.
func (d *Draft) Shown() bool {
	ls := &d.o.drafts
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return d.calls > 0
}

func (d *Draft) signal() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// sweepLocked drops the lanes nothing uses any more once their pacing has
// run out, so the next reply in such a chat starts as in a fresh one. A
// refused lane is kept, so the chat is not asked again.
func (ls *draftLanes) sweepLocked(now time.Time, interval time.Duration) {
	for chat, ln := range ls.lanes {
		if ln.open == 0 && ln.busy == nil && ln.refused == nil && !ln.last.Add(interval).After(now) && !ln.paused.After(now) {
			delete(ls.lanes, chat)
		}
	}
}

// serve sends the draft's latest text whenever the lane allows, until
// nothing new is left to send or the draft ends.
func (d *Draft) serve() {
	ls := &d.o.drafts
	defer ls.wg.Done()
	opt := d.o.opt.Drafts.withDefaults()
	for {
		ls.mu.Lock()
		ln := d.lane
		if d.ended || ls.closed || ln.refused != nil || !d.dirty {
			d.running = false
			ls.mu.Unlock()
			return
		}
		now := d.o.clock.Now()
		at := latest(d.since.Add(opt.Hold), ln.last.Add(opt.Interval), ln.paused)
		var busy chan struct{}
		if ln.busy != nil {
			busy = ln.done // another draft of the chat is on the wire
		}
		if busy == nil && !at.After(now) {
			text, plain := d.text, d.plain
			d.dirty = false
			done := make(chan struct{})
			ln.last, ln.busy, ln.done = now, d, done
			ls.mu.Unlock()
			err := d.call(text, plain, opt.CallTimeout)
			ls.mu.Lock()
			ln.busy, ln.done = nil, nil
			close(done)
			d.settle(text, err)
			ls.mu.Unlock()
			continue
		}
		ls.mu.Unlock()
		var timer <-chan time.Time
		if busy == nil {
			timer = d.o.clock.After(at.Sub(now))
		}
		select {
		case <-busy:
		case <-timer:
		case <-d.wake:
		case <-ls.ctx.Done():
		}
	}
}

// pauseDrafts holds the chat's drafts until until: a 429 on one of its
// messages is Telegram's flood control for the chat, and a draft sent
// inside that pause would only extend it.
func (o *Outbox) pauseDrafts(chat int64, until time.Time) {
	ls := &o.drafts
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.closed {
		return
	}
	ls.initLocked()
	ln := ls.lanes[chat]
	if ln == nil { // kept while paused (sweepLocked), so a draft begun meanwhile waits too
		ln = &draftLane{}
		ls.lanes[chat] = ln
	}
	if until.After(ln.paused) {
		ln.paused = until
	}
}

func latest(ts ...time.Time) time.Time {
	var t time.Time
	for _, u := range ts {
		if u.After(t) {
			t = u
		}
	}
	return t
}

var (
	// errNoDraftSlot means the global budget had no slot to spare.
	errNoDraftSlot = errors.New("no spare global slot for a draft")
	// errBlankDraft means the text formats to nothing: no call is made.
	errBlankDraft = errors.New("blank draft")
)

// call makes one sendMessageDraft request.
func (d *Draft) call(text string, plain bool, timeout time.Duration) error {
	api, _ := d.o.api.(DraftAPI)
	body, mode := d.format(text), models.ParseModeHTML
	if plain {
		body, mode = plainText(body), ""
	}
	if strings.TrimSpace(body) == "" {
		return errBlankDraft
	}
	if !d.o.draftSlot() {
		return errNoDraftSlot
	}
	thread := d.key.Thread
	if thread == 1 {
		thread = 0 // the General topic is addressed without a thread id
	}
	ctx, cancel := context.WithTimeout(d.o.drafts.ctx, timeout)
	defer cancel()
	_, err := api.SendMessageDraft(ctx, &bot.SendMessageDraftParams{
		ChatID: d.key.Chat, MessageThreadID: thread, DraftID: d.id, Text: body, ParseMode: mode,
	})
	return err
}

// settle applies the outcome of a call of text. Called with the lock held.
func (d *Draft) settle(text string, err error) {
	ln := d.lane
	if err == nil {
		d.sent, d.dirty = text, d.text != text
		d.calls++
		return
	}
	d.dirty = d.text != d.sent // try the latest text again, after the pause
	now := d.o.clock.Now()
	cls, retryAfter := classify(err)
	switch {
	case errors.Is(err, errNoDraftSlot):
	case errors.Is(err, errBlankDraft):
		d.sent, d.dirty = text, d.text != text
	case d.o.drafts.ctx.Err() != nil:
		d.dirty = false // closing
	case cls == classRateLimited:
		if retryAfter <= 0 {
			retryAfter = DefaultRetryAfter
		}
		if d.o.opt.RateLimited != nil {
			d.o.opt.RateLimited(d.key, retryAfter)
		}
		ln.paused = latest(ln.paused, now.Add(retryAfter)) // never shorter than a pause of the chat's messages (pauseDrafts)
		d.logger().Warn().Err(err).Int64("chat", d.key.Chat).Dur("retry_after", retryAfter).Msg("drafts paused by flood control")
	case cls == classParse && !d.plain:
		d.plain, d.dirty = true, true
	case cls == classTransient:
		ln.paused = latest(ln.paused, now.Add(d.o.opt.BackoffMin))
		d.logger().Debug().Err(err).Int64("chat", d.key.Chat).Msg("draft not sent")
	default:
		ln.refused = err
		d.dirty = false
		d.logger().Warn().Err(err).Int64("chat", d.key.Chat).Msg("Telegram refused a draft; the chat gets no more drafts")
	}
}

func (d *Draft) logger() *zerolog.Logger {
	if d.log != nil {
		return d.log
	}
	return d.o.opt.Logger
}

// draftSlot takes a global slot for a draft only when it is spare.
func (o *Outbox) draftSlot() bool { return o.gate.spare() }

// settleDrafts waits until no call of an ended draft in chat is in flight,
// at most DraftOptions.Settle. A draft that reached Telegram after the
// message replacing it would show again below that message. Only the
// worker of chat calls it, before a sendMessage.
func (o *Outbox) settleDrafts(chat int64) {
	ls := &o.drafts
	ls.mu.Lock()
	var done chan struct{}
	if ln := ls.lanes[chat]; ln != nil && ln.busy != nil && ln.busy.ended {
		done = ln.done
	}
	ls.mu.Unlock()
	if done == nil {
		return
	}
	select {
	case <-done:
	case <-o.clock.After(o.opt.Drafts.withDefaults().Settle):
	case <-o.runCtx.Done():
	}
}

// closeDrafts ends every draft and waits for their goroutines; a call in
// flight is cancelled. Drafts created afterwards are ended at once.
func (o *Outbox) closeDrafts() {
	ls := &o.drafts
	ls.mu.Lock()
	ls.closed = true
	cancel := ls.cancel
	ls.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	ls.wg.Wait()
}
