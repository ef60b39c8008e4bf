package bridge

import (
	"context"

	"github.com/untether/untether/internal/bridge/state"
)

// Crash abandons the bridge the way a SIGKILL of the daemon would: chats
// stop without draining, CLI processes are killed, nothing is flushed.
func (b *Bridge) Crash() {
	b.draining.Store(true)
	b.mu.Lock()
	chats := make([]*chat, 0, len(b.chats))
	for _, c := range b.chats {
		chats = append(chats, c)
	}
	b.mu.Unlock()
	for _, c := range chats {
		done := make(chan struct{})
		c.post(item{fn: func() {
			if c.sess != nil {
				c.sess.Kill()
			}
			close(done)
			select {} // the actor dies with the "process"
		}})
		<-done
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
