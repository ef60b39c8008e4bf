// Package owndir is untether's own directory in a project or worktree,
// .untether: uploads (what users send), outbox/<chat> (what Claude leaves
// for the chat), sent (what was delivered, and the diffs and zips untether
// makes). Claude's tools can write all of it, so any of these may be a
// link or a file; this package opens them through internal/safefs only,
// refuses one that is not a real directory, and reports each refusal once
// (Reports). The files and phone modules share it.
package owndir
