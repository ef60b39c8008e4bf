package bridge

import (
	"context"
	"time"

	"github.com/untether/untether/internal/bridge/state"
)

// Crash abandons the bridge the way a SIGKILL of the daemon would: chats
// stop handling their mailboxes, CLI processes are killed, nothing is
// flushed.
func (b *Bridge) Crash() {
	b.draining.Store(true)
	b.mu.Lock()
	chats := make([]*chat, 0, len(b.chats))
	for _, c := range b.chats {
		chats = append(chats, c)
	}
	b.mu.Unlock()
	for _, c := range chats {
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
func (b *Bridge) ChatPID(key state.ChatKey) int {
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
func (b *Bridge) BlockChat(key state.ChatKey) (release func()) {
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
func (b *Bridge) MailboxUpdates(key state.ChatKey) int {
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
func (b *Bridge) StalledFor(key state.ChatKey, now time.Time) time.Duration {
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

// ChatsHealthy is Healthy's chat half: the update loop's half needs a live
// poll, so a test that moves the clock minutes ahead checks this one.
func (b *Bridge) ChatsHealthy(now time.Time) error { return b.chatsHealthy(now) }

// ChatState is the state of a chat's CLI session, "" if it has none.
func (b *Bridge) ChatState(key state.ChatKey) string {
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
