package chat

import (
	"runtime/debug"
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
