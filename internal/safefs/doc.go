// Package safefs opens files and directories below a base directory
// without following a symbolic link anywhere below it, and opens files
// without blocking on anything that is not a regular file.
//
// untether keeps its own directories (.untether/uploads, sent, outbox) in
// project directories that Claude's tools can write, so any of them, or any
// file in them, may be swapped for a symbolic link, a FIFO or a device at
// any moment. os.Root is not enough there: it follows links that stay
// inside the root, so ".untether/uploads -> .." turns the uploads pruner
// loose on the project, and opening a FIFO blocks until a writer comes.
//
// So every path below the base is walked one component at a time with
// openat(O_DIRECTORY|O_NOFOLLOW) from the descriptor of the one before: a
// component that is a link, or anything but a directory, is refused
// ([ErrSymlink], [ErrNotDir]), and a swap after the walk cannot move what
// was opened. This is what openat2's RESOLVE_NO_SYMLINKS gives, without
// needing Linux 5.6 and with a missing directory created on the way
// ([Dir.Sub] with create). A file is opened with
// O_RDONLY|O_NONBLOCK|O_NOFOLLOW|O_NOCTTY and kept only when fstat on the
// descriptor says it is a regular file ([ErrNotRegular]); the caller then
// reads that descriptor, never the path again. The base itself is the
// operator's path and may contain links.
//
// Directories are only ever created here, never removed: [Dir.Remove]
// unlinks a file or a link (unlinkat without AT_REMOVEDIR), and
// [Dir.Rename] never replaces what is at the new name.
package safefs
