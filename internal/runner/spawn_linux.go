package runner

import (
	"fmt"
	"os/exec"
	"runtime"
	"sync"
)

// Every child is started from one OS thread that never exits. The CLI gets
// a parent-death signal (Pdeathsig) so it dies with the daemon even on
// SIGKILL, but Linux sends that signal when the *thread* that forked the
// child exits, not the process (golang/go#27505), and the Go runtime may
// end any thread that is not locked. A goroutine locked to its thread for
// the life of the process fixes the parent thread.

var spawnThread struct {
	once sync.Once
	reqs chan func()
}

// onSpawnThread runs f on the spawn thread and waits for it.
func onSpawnThread(f func()) {
	spawnThread.once.Do(func() {
		spawnThread.reqs = make(chan func())
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for req := range spawnThread.reqs {
				req()
			}
		}()
	})
	done := make(chan struct{})
	spawnThread.reqs <- func() {
		defer close(done)
		f()
	}
	<-done
}

// startOnSpawnThread is cmd.Start on the spawn thread. A panic in Start
// comes back as an error instead of ending the thread.
func startOnSpawnThread(cmd *exec.Cmd) (err error) {
	onSpawnThread(func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%w: start %s: %v", ErrInternal, cmd.Path, r)
			}
		}()
		err = cmd.Start()
	})
	return err
}
