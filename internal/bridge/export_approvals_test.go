package bridge

import (
	"context"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/runner"
)

// ChatProcessState is the state of a chat's session, read off the actor (so
// it answers while the actor is blocked); StateExited when it has none.
func (b *Bridge) ChatProcessState(key state.ChatKey) runner.State {
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
func (b *Bridge) CloseChatProcess(ctx context.Context, key state.ChatKey) <-chan error {
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
