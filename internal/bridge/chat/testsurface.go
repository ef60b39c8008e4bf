package chat

import (
	"context"
	"fmt"
	"time"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/runner"
)

// The test surface: what the bridge's full-stack tests (package bridge_test,
// through bridge's export_test.go) may ask of the engine and its chats.
// Nothing in the daemon calls it.

// Crash abandons the bridge the way a SIGKILL of the daemon would: chats
// stop handling their mailboxes, CLI processes are killed, nothing is
// flushed.
func (b *Engine) Crash() {
	b.draining.Store(true)
	for _, c := range b.liveChats() {
		c.dead.Store(true)
		if s := c.live.Load(); s != nil {
			s.Kill()
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = b.out.Close(ctx) // stop sending; journaled messages stay journaled
}

// ChatPID is the live CLI pid of a chat, 0 if none.
func (b *Engine) ChatPID(key state.ChatKey) int {
	b.mu.Lock()
	c := b.chats[key]
	b.mu.Unlock()
	if c == nil {
		return 0
	}
	pid := make(chan int, 1)
	c.post(item{fn: func() {
		if c.sess == nil {
			pid <- 0
			return
		}
		pid <- c.sess.PID()
	}})
	return <-pid
}

// BlockChat makes a chat's actor busy until release is called, as a slow
// CLI start would; messages routed meanwhile wait in its mailbox.
func (b *Engine) BlockChat(key state.ChatKey) (release func()) {
	c := b.chat(key, false)
	started, unblock := make(chan struct{}), make(chan struct{})
	c.post(item{fn: func() {
		close(started)
		<-unblock
	}})
	<-started
	return func() { close(unblock) }
}

// MailboxUpdates is the number of Telegram updates waiting in a chat's
// mailbox. Internal items (a turn's trailing bookkeeping, timers) are not
// counted: on a loaded machine they can still be queued behind a test's
// BlockChat, and a test waiting for "its update and nothing else" would
// then wait forever.
func (b *Engine) MailboxUpdates(key state.ChatKey) int {
	b.mu.Lock()
	c := b.chats[key]
	b.mu.Unlock()
	if c == nil {
		return 0
	}
	c.boxMu.Lock()
	defer c.boxMu.Unlock()
	n := 0
	for _, it := range c.box {
		if it.updateID != 0 {
			n++
		}
	}
	return n
}

// StalledFor is how long, at now, the chat's oldest unhandled mailbox item
// has waited (0 when its mailbox is empty): what Healthy holds against it.
func (b *Engine) StalledFor(key state.ChatKey, now time.Time) time.Duration {
	b.mu.Lock()
	c := b.chats[key]
	b.mu.Unlock()
	if c == nil {
		return 0
	}
	since := c.stalledSince()
	if since.IsZero() {
		return 0
	}
	return now.Sub(since)
}

// AgeMailbox makes a chat's oldest unhandled mailbox item d older, so a
// test sees a wedge Healthy reports after minutes without waiting them.
func (b *Engine) AgeMailbox(key state.ChatKey, d time.Duration) {
	b.mu.Lock()
	c := b.chats[key]
	b.mu.Unlock()
	if c == nil {
		return
	}
	c.boxMu.Lock()
	defer c.boxMu.Unlock()
	if !c.boxAt.IsZero() {
		c.boxAt = c.boxAt.Add(-d)
	}
}

// ChatState is the state of a chat's CLI session, "" if it has none.
func (b *Engine) ChatState(key state.ChatKey) string {
	b.mu.Lock()
	c := b.chats[key]
	b.mu.Unlock()
	if c == nil {
		return ""
	}
	st := make(chan string, 1)
	c.post(item{fn: func() {
		if c.sess == nil {
			st <- ""
			return
		}
		st <- string(c.sess.State())
	}})
	return <-st
}

// ChatProcessState is the state of a chat's session, read off the actor (so
// it answers while the actor is blocked); StateExited when it has none.
func (b *Engine) ChatProcessState(key state.ChatKey) runner.State {
	b.mu.Lock()
	c := b.chats[key]
	b.mu.Unlock()
	if c == nil {
		return runner.StateExited
	}
	s := c.live.Load()
	if s == nil {
		return runner.StateExited
	}
	return s.State()
}

// CloseChatProcess closes a chat's CLI the way idle eviction does (stdin
// first), off the actor. The returned channel yields CloseProcess's result.
func (b *Engine) CloseChatProcess(ctx context.Context, key state.ChatKey) <-chan error {
	done := make(chan error, 1)
	b.mu.Lock()
	c := b.chats[key]
	b.mu.Unlock()
	var s *runner.Session
	if c != nil {
		s = c.live.Load()
	}
	if s == nil {
		done <- nil
		return done
	}
	go func() { done <- s.CloseProcess(ctx) }()
	return done
}

// ButtonKinds is every kind of button, as the first byte of its callback
// data: the list parseCallbackData accepts.
func ButtonKinds(mods func(*Host) []Module) []byte {
	kinds := (&Engine{}).buildRegistry(mods).kinds()
	out := make([]byte, len(kinds))
	for i, k := range kinds {
		out[i] = byte(k)
	}
	return out
}

// OwnButton makes a live button of kind that belongs to key, the way its
// feature would (a token in the button table for the buttons of a running
// chat, a row in the state store or a kept voice note for the ones that
// outlive a restart), and returns its callback data. A kind it does not
// know is an error, so a new kind of button cannot be left out of the
// tests that go over them all.
func (b *Engine) OwnButton(kind byte, key state.ChatKey) (string, error) {
	k := ButtonKind(kind)
	if sb, ok := b.reg.stored[k]; ok {
		if sb.Sample == nil {
			return "", fmt.Errorf("own a %q button: its StoredButton has no Sample", kind)
		}
		tok, err := sb.Sample(context.Background(), key)
		if err != nil {
			return "", fmt.Errorf("own a %q button: %w", kind, err)
		}
		return CallbackData(k, tok), nil
	}
	if _, ok := b.reg.buttons[k]; !ok {
		return "", fmt.Errorf("own a %q button: no such kind is registered", kind)
	}
	if b.chat(key, key.Chat < 0) == nil {
		return "", fmt.Errorf("own a %q button: draining", kind)
	}
	tok := NewToken()
	b.registerButton(tok, key)
	if b.reg.withArg(k) {
		return CallbackArg(k, tok, 0), nil
	}
	return CallbackData(k, tok), nil
}
