// Package files is what goes from the project to the chat: Claude's
// outbox, /get, 📄 Full diff, linked files, and the pruning of old
// uploads and sent files.
//
// Files back to the user. Claude is told once, with --append-system-prompt,
// that files it writes to its chat's directory under .untether/outbox/ in
// its working directory reach the chat when its turn ends (one directory
// per chat and topic: chats share the project, and a file meant for a
// private chat must never land in a group). After each turn the bridge
// sends what is there (pictures as photos, the rest as documents, several
// at once as albums, at most [files] max_files_per_turn) through the
// outbox, so pacing, 429s and the journal apply, and moves each file to
// .untether/sent/, where it is pruned after [files] outbox_keep. The send
// is journaled before the move and names both places, so a crash in
// between neither loses the file nor sends it twice.
//
// Claude's tools can write all of these directories, so they are reached
// through safefs only (internal/bridge/owndir): an outbox or sent directory that is a
// link is refused, never followed. Each file is opened once, without
// following a link or blocking, and must be a regular file by fstat; that
// descriptor is what the outbox sends (scan.go), so a file swapped
// afterwards for a FIFO or a link to a secret changes nothing.
package files
