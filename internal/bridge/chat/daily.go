package chat

import (
	"context"
	"sync"
	"time"
)

// pruneEvery is how often the daily housekeeping (old uploads, old state)
// runs while the daemon runs.
const pruneEvery = 24 * time.Hour

// daily runs fn now and then every pruneEvery until ctx ends. The returned
// function stops it and waits for a run in progress, so nothing touches the
// store or the workdir after Run returns.
func (b *Engine) daily(ctx context.Context, fn func(now time.Time)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		RunDaily(ctx, fn)
	}()
	return func() {
		cancel()
		wg.Wait()
	}
}
