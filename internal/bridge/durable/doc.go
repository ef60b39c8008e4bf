// Package durable is the state store as the bridge writes to it. A write
// the disk refuses (state.ErrStorage: full, or a read-only file system)
// never stops a chat: Writes keeps refused writes in memory, in order per
// slot (one chat's record, one live message, one approval), does them again
// once the disk takes writes, logs each kind of failure once with the
// database path and the free space, and gives each chat at risk one notice
// saying what a restart would lose (SyncNotice, sent by the chat's actor),
// deleted when all is saved again. A Watcher (watch.go) hears each refused
// write and each episode's start and end, for what an operator watches
// from outside: the metrics and /healthz. Reads, and the writes the bridge makes
// only at start-up, go straight to the embedded *state.Store.
package durable
