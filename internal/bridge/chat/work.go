package chat

import (
	"context"
	"runtime/debug"
	"sync"
	"time"
)

// goTracked runs fn on a goroutine Shutdown waits for (workWait): work a
// chat offloaded must not be cut off, or outlive the engine, unseen.
func (b *Engine) goTracked(fn func()) {
	b.work.Add(1)
	go func() {
		defer b.work.Done()
		defer func() {
			if r := recover(); r != nil {
				b.log.Error().Interface("panic", r).Bytes("stack", debug.Stack()).Msg("recovered panic in offloaded work")
			}
		}()
		fn()
	}()
}

// workWaitAtShutdown bounds how long Shutdown waits for offloaded work
// once the chats stopped and the outbox flushed: it is part of stopBudget.
const workWaitAtShutdown = 2 * time.Second

// waitWork waits for the offloaded work at shutdown, at most
// workWaitAtShutdown, and logs what is left running.
func (b *Engine) waitWork() {
	if !b.workWait(workWaitAtShutdown) {
		b.log.Warn().Msg("work the chats offloaded was still running at shutdown")
	}
}

// workWait waits for the offloaded work, at most d; it reports whether all
// of it ended.
func (b *Engine) workWait(d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		b.work.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// startModules starts the modules' background work (Starter); the
// returned function stops it and waits until it has stopped, so nothing a
// module runs touches the store after Run returns.
func (b *Engine) startModules(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, s := range b.starters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Start(ctx)
		}()
	}
	return func() {
		cancel()
		wg.Wait()
	}
}

// RunDaily runs fn now and then every day until ctx ends, and returns once
// it has: a module's housekeeping (Starter), such as pruning old files.
func RunDaily(ctx context.Context, fn func(now time.Time)) {
	tick := time.NewTicker(pruneEvery)
	defer tick.Stop()
	for {
		fn(time.Now())
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
