package durable

import (
	"time"
)

// Watcher hears what the state writes go through, for what an operator
// watches from outside (metrics, /healthz): each write the storage
// refused, by kind (updates, chat, outbox, …), and each episode of refused
// writes, from its first refusal (Refusing: the error, and since when) to
// the moment every kept write is saved again (Saved). Its methods are
// called without locks held and must not block.
type Watcher interface {
	WriteRefused(kind string)
	Refusing(err error, since time.Time)
	Saved()
}

// SetWatcher makes w hear about refused writes from now on; nil stops it.
func (w *Writes) SetWatcher(watch Watcher) {
	if watch == nil {
		watch = noWatcher{}
	}
	w.mu.Lock()
	w.watch = watch
	w.mu.Unlock()
}

type noWatcher struct{}

func (noWatcher) WriteRefused(string)       {}
func (noWatcher) Refusing(error, time.Time) {}
func (noWatcher) Saved()                    {}
