package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"
)

// ---- Telegram errors, built exactly as go-telegram/bot v1.19.0 builds them
// (raw_request.go).

func errBadRequest(desc string) error { return fmt.Errorf("%w, %s", bot.ErrorBadRequest, desc) }

func errTooMany(retryAfter int) error {
	return &bot.TooManyRequestsError{
		Message:    fmt.Sprintf("%s, Too Many Requests: retry after %d", bot.ErrorTooManyRequests, retryAfter),
		RetryAfter: retryAfter,
	}
}

func errForbidden() error {
	return fmt.Errorf("%w, %s", bot.ErrorForbidden, "Forbidden: bot was blocked by the user")
}

func errMigrated(to int) error {
	return &bot.MigrateError{
		Message:         fmt.Sprintf("%s: %s", bot.ErrorBadRequest, "Bad Request: group chat was upgraded to a supergroup chat"),
		MigrateToChatID: to,
	}
}

func errTransport(method string) error {
	return fmt.Errorf("error do request for method %s, %w", method, &url.Error{
		Op: "Post", URL: "https://api.telegram.org/bot***/" + method, Err: errors.New("read: connection reset by peer"),
	})
}

func err5xx(method string) error {
	return fmt.Errorf("error response from telegram for method %s, %d %s", method, 502, "Bad Gateway")
}

const (
	descNotModified = "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message"
	descEditGone    = "Bad Request: message to edit not found"
	descDeleteGone  = "Bad Request: message to delete not found"
	descTooLong     = "Bad Request: message is too long"
)

// ---- fake Telegram: records calls with fake-clock timestamps, keeps message
// state so "not modified", "not found" and "too long" arise as they would on
// the real server, and can be scripted to fail.

type call struct {
	Method    string // sendMessage, editMessageText, deleteMessage, sendChatAction
	Chat      int64
	Thread    int
	MessageID int // target for edit/delete, assigned id for a successful send
	Text      string
	ParseMode models.ParseMode
	Markup    string
	ReplyTo   int
	ReplyLax  bool
	Silent    bool
	NoPreview bool
	At        time.Time
	Err       error
	// StartSeq and DoneSeq order the call's start and end among all
	// starts and ends, so checks can tell calls in flight together apart.
	StartSeq, DoneSeq int
}

type shownMsg struct{ text, markup string }

type fakeTG struct {
	clock Clock

	mu      sync.Mutex
	calls   []call
	nextID  map[int64]int
	msgs    map[int64]map[int]shownMsg
	script  func(c call) error // nil error: behave like Telegram
	gate    chan struct{}      // when set, calls block until it is closed
	gateFor string             // the method the gate holds; "" for all
	started int                // calls that entered (including gated ones)
	events  int                // starts and ends so far
}

func newFakeTG(clock Clock) *fakeTG {
	return &fakeTG{clock: clock, nextID: map[int64]int{}, msgs: map[int64]map[int]shownMsg{}}
}

func (f *fakeTG) setScript(s func(c call) error) {
	f.mu.Lock()
	f.script = s
	f.mu.Unlock()
}

// hold makes calls block until release.
func (f *fakeTG) hold() { f.holdMethod("") }

// holdMethod makes calls of method (all, if "") block until release or
// until their context ends.
func (f *fakeTG) holdMethod(method string) {
	f.mu.Lock()
	f.gate, f.gateFor = make(chan struct{}), method
	f.mu.Unlock()
}

func (f *fakeTG) release() {
	f.mu.Lock()
	if f.gate != nil {
		close(f.gate)
		f.gate = nil
	}
	f.mu.Unlock()
}

func (f *fakeTG) seed(chat int64, id int, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.msgs[chat] == nil {
		f.msgs[chat] = map[int]shownMsg{}
	}
	f.msgs[chat][id] = shownMsg{text: text}
	if f.nextID[chat] < id {
		f.nextID[chat] = id
	}
}

// userDeletes removes a message as a user deleting it in their client
// would: no call is made, and Telegram no longer knows the message.
func (f *fakeTG) userDeletes(chat int64, id int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.msgs[chat], id)
}

func (f *fakeTG) Calls() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *fakeTG) Started() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.started
}

func (f *fakeTG) callsTo(chat int64) []call {
	var out []call
	for _, c := range f.Calls() {
		if c.Chat == chat {
			out = append(out, c)
		}
	}
	return out
}

func markupString(m models.ReplyMarkup) string {
	if m == nil {
		return ""
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// enter records the start of a call and applies the gate. It returns the
// call's StartSeq.
func (f *fakeTG) enter(ctx context.Context, method string) (int, error) {
	f.mu.Lock()
	f.started++
	f.events++
	seq := f.events
	gate := f.gate
	if f.gateFor != "" && f.gateFor != method {
		gate = nil
	}
	f.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return seq, fmt.Errorf("error do request for method %s, %w", method, &url.Error{Op: "Post", URL: method, Err: ctx.Err()})
		}
	}
	return seq, nil
}

// finish applies the script and Telegram's rules, records the call and
// returns its error. Called with f.mu held.
func (f *fakeTG) finish(c call, rules func() error) (call, error) {
	c.At = f.clock.Now()
	f.events++
	c.DoneSeq = f.events
	var err error
	if f.script != nil {
		err = f.script(c)
	}
	if err == nil {
		err = rules()
	}
	c.Err = err
	f.calls = append(f.calls, c)
	return c, err
}

// visibleLen approximates Telegram's length check after entity parsing.
func visibleLen(text string, mode models.ParseMode) int {
	if mode == models.ParseModeHTML {
		var b strings.Builder
		in := false
		for _, r := range text {
			switch {
			case r == '<':
				in = true
			case r == '>' && in:
				in = false
			case !in:
				b.WriteRune(r)
			}
		}
		text = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&", "&quot;", `"`).Replace(b.String())
	}
	return len(utf16.Encode([]rune(text)))
}

// htmlOK is a deliberately independent, crude HTML check: only a few tags
// exist in the tests' inputs.
func htmlOK(text string) bool {
	for i := 0; i < len(text); i++ {
		if text[i] != '<' {
			continue
		}
		rest := text[i+1:]
		ok := false
		for _, t := range []string{"b>", "/b>", "i>", "/i>", "code>", "/code>", "pre>", "/pre>", "a href=", "/a>"} {
			if strings.HasPrefix(rest, t) {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func (f *fakeTG) SendMessage(ctx context.Context, p *bot.SendMessageParams) (*models.Message, error) {
	start, err := f.enter(ctx, "sendMessage")
	if err != nil {
		return nil, err
	}
	chat := p.ChatID.(int64)
	c := call{
		StartSeq: start, Method: "sendMessage", Chat: chat, Thread: p.MessageThreadID, Text: p.Text, ParseMode: p.ParseMode,
		Markup: markupString(p.ReplyMarkup), Silent: p.DisableNotification,
		NoPreview: p.LinkPreviewOptions != nil && p.LinkPreviewOptions.IsDisabled != nil && *p.LinkPreviewOptions.IsDisabled,
	}
	if p.ReplyParameters != nil {
		c.ReplyTo, c.ReplyLax = p.ReplyParameters.MessageID, p.ReplyParameters.AllowSendingWithoutReply
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err = f.finish(c, func() error {
		if p.ParseMode == models.ParseModeHTML && !htmlOK(p.Text) {
			return errBadRequest(`Bad Request: can't parse entities: Unsupported start tag "x" at byte offset 3`)
		}
		if visibleLen(p.Text, p.ParseMode) > 4096 {
			return errBadRequest(descTooLong)
		}
		f.nextID[chat]++
		if f.msgs[chat] == nil {
			f.msgs[chat] = map[int]shownMsg{}
		}
		f.msgs[chat][f.nextID[chat]] = shownMsg{text: p.Text, markup: markupString(p.ReplyMarkup)}
		return nil
	})
	if err != nil {
		return nil, err
	}
	f.calls[len(f.calls)-1].MessageID = f.nextID[chat]
	return &models.Message{ID: f.nextID[chat], Chat: models.Chat{ID: chat}, Text: c.Text}, nil
}

func (f *fakeTG) EditMessageText(ctx context.Context, p *bot.EditMessageTextParams) (*models.Message, error) {
	start, err := f.enter(ctx, "editMessageText")
	if err != nil {
		return nil, err
	}
	chat := p.ChatID.(int64)
	c := call{
		StartSeq: start, Method: "editMessageText", Chat: chat, MessageID: p.MessageID, Text: p.Text, ParseMode: p.ParseMode,
		Markup:    markupString(p.ReplyMarkup),
		NoPreview: p.LinkPreviewOptions != nil && p.LinkPreviewOptions.IsDisabled != nil && *p.LinkPreviewOptions.IsDisabled,
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	_, err = f.finish(c, func() error {
		old, ok := f.msgs[chat][p.MessageID]
		switch {
		case !ok:
			return errBadRequest(descEditGone)
		case p.ParseMode == models.ParseModeHTML && !htmlOK(p.Text):
			return errBadRequest(`Bad Request: can't parse entities: Unsupported start tag "x" at byte offset 3`)
		case visibleLen(p.Text, p.ParseMode) > 4096:
			return errBadRequest(descTooLong)
		case old.text == p.Text && old.markup == c.Markup:
			return errBadRequest(descNotModified)
		}
		f.msgs[chat][p.MessageID] = shownMsg{text: p.Text, markup: c.Markup}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &models.Message{ID: p.MessageID, Chat: models.Chat{ID: chat}, Text: p.Text}, nil
}

func (f *fakeTG) DeleteMessage(ctx context.Context, p *bot.DeleteMessageParams) (bool, error) {
	start, err := f.enter(ctx, "deleteMessage")
	if err != nil {
		return false, err
	}
	chat := p.ChatID.(int64)
	f.mu.Lock()
	defer f.mu.Unlock()
	_, err = f.finish(call{StartSeq: start, Method: "deleteMessage", Chat: chat, MessageID: p.MessageID}, func() error {
		if _, ok := f.msgs[chat][p.MessageID]; !ok {
			return errBadRequest(descDeleteGone)
		}
		delete(f.msgs[chat], p.MessageID)
		return nil
	})
	return err == nil, err
}

func (f *fakeTG) SendChatAction(ctx context.Context, p *bot.SendChatActionParams) (bool, error) {
	start, err := f.enter(ctx, "sendChatAction")
	if err != nil {
		return false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	_, err = f.finish(call{StartSeq: start, Method: "sendChatAction", Chat: p.ChatID.(int64), Thread: p.MessageThreadID, Text: string(p.Action)},
		func() error { return nil })
	return err == nil, err
}

var _ API = (*fakeTG)(nil)

// ---- fake clock. In auto mode every wait returns at once and moves time
// forward to its deadline (virtual time: monotonic, and a waiter always wakes
// at or after its deadline). In manual mode waits block until Advance.

type waiter struct {
	at time.Time
	ch chan time.Time
}

type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	auto    bool
	waiters []waiter
}

func newAutoClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), auto: true}
}

func newManualClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	f.mu.Lock()
	defer f.mu.Unlock()
	at := f.now.Add(d)
	if f.auto {
		if at.After(f.now) {
			f.now = at
		}
		ch <- f.now
		return ch
	}
	if !at.After(f.now) {
		ch <- f.now
		return ch
	}
	f.waiters = append(f.waiters, waiter{at: at, ch: ch})
	return ch
}

func (f *fakeClock) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	kept := f.waiters[:0]
	for _, w := range f.waiters {
		if w.at.After(f.now) {
			kept = append(kept, w)
			continue
		}
		w.ch <- f.now
	}
	f.waiters = kept
}

// Waiters is the number of pending waits.
func (f *fakeClock) Waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters)
}

// AdvanceToNext moves time to the earliest pending deadline and fires it.
func (f *fakeClock) AdvanceToNext() {
	f.mu.Lock()
	if len(f.waiters) == 0 {
		f.mu.Unlock()
		return
	}
	next := f.waiters[0].at
	for _, w := range f.waiters {
		if w.at.Before(next) {
			next = w.at
		}
	}
	d := next.Sub(f.now)
	f.mu.Unlock()
	f.Advance(d)
}

// hasWaiterAt reports whether some goroutine waits for exactly t.
func (f *fakeClock) hasWaiterAt(t time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, w := range f.waiters {
		if w.at.Equal(t) {
			return true
		}
	}
	return false
}

// ---- in-memory journal.

type memJournal struct {
	mu      sync.Mutex
	next    JournalID
	entries map[JournalID]JournalEntry
	done    []JournalID
}

func newMemJournal() *memJournal { return &memJournal{entries: map[JournalID]JournalEntry{}} }

func (j *memJournal) Save(_ context.Context, key ChatKey, kind string, payload []byte) (JournalID, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.next++
	j.entries[j.next] = JournalEntry{ID: j.next, Key: key, Kind: kind, Payload: slices.Clone(payload)}
	return j.next, nil
}

func (j *memJournal) Done(_ context.Context, id JournalID) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, ok := j.entries[id]; !ok {
		return fmt.Errorf("journal entry %d not found", id)
	}
	delete(j.entries, id)
	j.done = append(j.done, id)
	return nil
}

// Pending returns the entries not marked done, in id order, as a store
// would at startup.
func (j *memJournal) Pending() []JournalEntry {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]JournalEntry, 0, len(j.entries))
	for _, e := range j.entries {
		out = append(out, e)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out
}

// ---- helpers.

// waitFor waits for a condition. The deadline only turns a hang into a
// failure; no test asserts how fast anything happens.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func await(t testing.TB, p *Pending) (Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := p.Wait(ctx)
	require.NotErrorIs(t, err, context.DeadlineExceeded, "operation never resolved")
	return res, err
}

func noJitter(time.Duration) time.Duration { return 0 }

func newTestOutbox(t testing.TB, clock *fakeClock, opts Options) (*Outbox, *fakeTG) {
	t.Helper()
	tg := newFakeTG(clock)
	opts.Clock = clock
	if opts.Jitter == nil {
		opts.Jitter = noJitter
	}
	o := New(tg, opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // tests that want a drain call Close themselves
		_ = o.Close(ctx)
	})
	return o, tg
}

type testKeyboard struct {
	InlineKeyboard [][]testButton `json:"inline_keyboard"`
}

type testButton struct {
	Text string `json:"text"`
	Data string `json:"callback_data"`
}

func approveKeyboard(id string) testKeyboard {
	return testKeyboard{InlineKeyboard: [][]testButton{{{Text: "Approve", Data: "ap:" + id}, {Text: "Deny", Data: "dn:" + id}}}}
}

// waiting counts goroutines blocked on the manual clock.
func (f *fakeClock) waiting() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters)
}

// probingTG is a fake Telegram that also answers getMe, so the outbox
// probes it while calls fail; down makes every call, getMe included, fail
// as a 502 would.
type probingTG struct {
	*fakeTG
	down   atomic.Bool
	probes atomic.Int32
}

func newProbingTG(clock Clock) *probingTG {
	p := &probingTG{fakeTG: newFakeTG(clock)}
	p.setScript(func(call) error {
		if p.down.Load() {
			return err5xx("sendMessage")
		}
		return nil
	})
	return p
}

func (p *probingTG) GetMe(ctx context.Context) (*models.User, error) {
	p.probes.Add(1)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p.down.Load() {
		return nil, err5xx("getMe")
	}
	return &models.User{ID: 1, IsBot: true}, nil
}
