package bridge

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // image.DecodeConfig of outgoing photos
	_ "image/png"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
)

// Files back to the user. Claude is told once, with --append-system-prompt,
// that files it writes to its chat's directory under .untether/outbox/ in
// its working directory reach the chat when its turn ends (one directory
// per chat and topic: chats share the project, and a file meant for a
// private chat must never land in a group). After each turn the bridge sends what is
// there (pictures as photos, the rest as documents, several at once as
// albums) through the outbox, so pacing, 429s and the journal apply, and
// moves each file to .untether/sent/, where it is pruned after [files]
// outbox_keep. The send is journaled before the move and names both places,
// so a crash in between neither loses the file nor sends it twice.

const (
	// untetherDir is untether's own directory in a project or worktree:
	// never a change of the user's (worktrees.go), never zipped (get.go).
	untetherDir = ".untether"
	outboxRoot  = ".untether/outbox"
	sentDir     = ".untether/sent"
)

// chatOutbox is a chat's outbox directory, relative to the workdir:
// .untether/outbox/<chat id>, or <chat id>_<topic id> in a forum topic.
func chatOutbox(key state.ChatKey) string {
	name := strconv.FormatInt(int64(key.Chat), 10)
	if key.Thread != 0 {
		name += "_" + strconv.Itoa(int(key.Thread))
	}
	return outboxRoot + "/" + name
}

// Telegram's upload limits for bots (telegram-media.md §0).
const (
	maxPhotoBytes    = 10 << 20
	maxDocumentBytes = 50 << 20
	maxPhotoSides    = 10000
	maxPhotoRatio    = 20
)

// tagFile is the journal tag of files sent to the chat.
const tagFile = "file"

// outboxPrompt is what Claude is told about its outbox directory.
func outboxPrompt(workdir, dir string) string {
	return "untether (the Telegram bridge you are talking through) delivers files: any file you write directly " +
		"in " + path.Join(workdir, dir) + "/ (relative to the project: " + dir + "/) is sent to the user's " +
		"Telegram chat when your turn ends: PNG and JPEG pictures up to 10 MB as photos, anything else as a document " +
		"up to 50 MB. Use it when the user asks you to send, export or show them a file. Sent files move to " +
		sentDir + "/. Subdirectories and symbolic links are not sent."
}

// withOutboxPrompt adds the outbox note to the CLI's arguments, merging it
// into an --append-system-prompt the operator configured in extra_args.
func withOutboxPrompt(args []string, workdir string, key state.ChatKey) []string {
	note := outboxPrompt(workdir, chatOutbox(key))
	out := slices.Clone(args)
	for i, a := range out {
		switch {
		case a == "--append-system-prompt" && i+1 < len(out):
			out[i+1] += "\n\n" + note
			return out
		case strings.HasPrefix(a, "--append-system-prompt="):
			out[i] += "\n\n" + note
			return out
		}
	}
	return append(out, "--append-system-prompt", note)
}

// outgoingFile is a file found in the outbox directory.
type outgoingFile struct {
	name string // in outboxDir
	size int64
	kind outbox.MediaKind
	// skip, when set, says why the file is not sent.
	skip string
}

// scanOutbox lists an outbox directory: regular files to send, and
// entries that are not sent with the reason. A missing directory is empty.
func scanOutbox(root *os.Root, outboxDir string) ([]outgoingFile, error) {
	dir, err := root.Open(outboxDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", outboxDir, err)
	}
	entries, err := dir.ReadDir(-1)
	dir.Close()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", outboxDir, err)
	}
	var out []outgoingFile
	for _, e := range entries {
		rel := outboxDir + "/" + e.Name()
		info, err := root.Lstat(rel)
		if err != nil {
			continue // gone meanwhile
		}
		f := outgoingFile{name: e.Name(), size: info.Size(), kind: outbox.MediaDocument}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			f.skip = "is a symbolic link; only regular files are sent"
		case info.IsDir():
			f.skip = "is a directory; only files directly in the outbox directory are sent"
		case !info.Mode().IsRegular():
			f.skip = "is not a regular file"
		case info.Size() == 0:
			f.skip = "is empty"
		case info.Size() > maxDocumentBytes:
			f.skip = fmt.Sprintf("is %s, over the 50 MB Telegram lets a bot send", humanSize(info.Size()))
		case isPhoto(root, rel, info.Size()):
			f.kind = outbox.MediaPhoto
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b outgoingFile) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// isPhoto reports whether a file can go as a photo: a JPEG or PNG within
// Telegram's photo limits. Anything else goes as a document, which keeps
// its bytes exactly.
func isPhoto(root *os.Root, rel string, size int64) bool {
	if size > maxPhotoBytes {
		return false
	}
	f, err := root.Open(rel)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	if mt := http.DetectContentType(head[:n]); mt != "image/png" && mt != "image/jpeg" {
		return false
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return false
	}
	cfg, _, err := image.DecodeConfig(f)
	w, h := cfg.Width, cfg.Height
	return err == nil && w > 0 && h > 0 && w+h <= maxPhotoSides && max(w, h) <= maxPhotoRatio*min(w, h)
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// sentName picks a new name in sentDir for a file called name: stamped,
// and never one that exists or that taken (names picked for files not
// moved there yet) holds; the name is added to taken.
func sentName(root *os.Root, name string, now time.Time, taken map[string]bool) string {
	base, ext := uploadName(name)
	stamp := now.UTC().Format("20060102-150405")
	for i := 1; ; i++ {
		n := stamp + "-" + base + ext
		if i > 1 {
			n = stamp + "-" + base + "-" + strconv.Itoa(i) + ext
		}
		if _, err := root.Lstat(sentDir + "/" + n); (errors.Is(err, fs.ErrNotExist) && !taken[n]) || i >= 1000 {
			if taken != nil {
				taken[n] = true
			}
			return n
		}
	}
}

// deliverOutbox sends what Claude left in the outbox directory, replying
// to replyTo. It runs on the actor at the end of a turn: listing a
// directory and reading a few image headers is quick, and the uploads
// themselves happen in the outbox.
func (c *chat) deliverOutbox(replyTo int) {
	c.deliverOutboxIn(c.uploadDir(c.b.Config()), replyTo) // projects.go
}

// deliverOutboxIn is deliverOutbox for the CLI that ran in workdir (turn.go
// uses it when the process dies mid-turn).
func (c *chat) deliverOutboxIn(workdir string, replyTo int) {
	if workdir == "" {
		return // a project on another host: its outbox is not on this machine, and Claude was not told of one
	}
	root, err := os.OpenRoot(workdir)
	if err != nil {
		return // the project directory is gone; the next message says so
	}
	defer root.Close()
	outboxDir := chatOutbox(c.key)
	files, err := scanOutbox(root, outboxDir)
	if err != nil {
		c.log.Warn().Err(err).Msg("read the outbox directory")
		return
	}
	if len(files) == 0 {
		return
	}
	if err := root.MkdirAll(sentDir, 0o700); err != nil {
		c.log.Warn().Err(err).Msg("create " + sentDir)
		c.reply("⚠️ Claude left files in "+render.EscapeHTML(outboxDir)+"/, but untether could not create "+render.EscapeHTML(sentDir)+"/ to keep them after sending: "+render.EscapeHTML(err.Error()), replyTo)
		return
	}
	now := time.Now()
	var photos, docs []outbox.MediaFile
	var notes []string
	taken := map[string]bool{}
	for _, f := range files {
		dest := sentDir + "/" + sentName(root, f.name, now, taken)
		if f.skip != "" {
			if err := root.Rename(outboxDir+"/"+f.name, dest); err != nil {
				c.log.Warn().Err(err).Str("file", f.name).Msg("move a file that is not sent")
				dest = outboxDir + "/" + f.name
			}
			notes = append(notes, fmt.Sprintf("<code>%s</code> %s; it is at <code>%s</code>",
				render.EscapeHTML(f.name), render.EscapeHTML(f.skip), render.EscapeHTML(path.Join(workdir, dest))))
			continue
		}
		mf := outbox.MediaFile{Kind: f.kind, Dir: workdir, Path: dest, Fallback: outboxDir + "/" + f.name, Name: f.name}
		if f.kind == outbox.MediaPhoto {
			mf.Caption = render.EscapeHTML(f.name)
			photos = append(photos, mf)
		} else {
			docs = append(docs, mf)
		}
	}
	for _, group := range append(chunkFiles(photos), chunkFiles(docs)...) {
		c.b.out.SendMedia(c.ctx(), c.outKey, outbox.High, outbox.Media{Files: group},
			outbox.SendOptions{ReplyTo: outbox.MessageID(replyTo), Tag: tagFile})
		replyTo = 0 // the first message answers the question; the rest follow it
		for _, mf := range group {
			// Journaled first (naming both places), moved second: see above.
			if err := root.Rename(mf.Fallback, mf.Path); err != nil {
				c.log.Warn().Err(err).Str("file", mf.Name).Msg("move a sent file to " + sentDir)
			}
		}
	}
	c.log.Info().Int("photos", len(photos)).Int("documents", len(docs)).Int("not_sent", len(notes)).Msg("sending files from the outbox")
	if len(notes) > 0 {
		c.reply("📎 Not sent:\n• "+strings.Join(notes, "\n• "), 0)
	}
}

// chunkFiles groups files into albums of at most outbox.MaxAlbum.
func chunkFiles(files []outbox.MediaFile) [][]outbox.MediaFile {
	var out [][]outbox.MediaFile
	for len(files) > 0 {
		n := min(len(files), outbox.MaxAlbum)
		out = append(out, files[:n])
		files = files[n:]
	}
	return out
}

// settleMovedFiles finishes the moves a crash interrupted: a journaled file
// still at its old place goes to the one the journal names, before the
// journal is replayed, so the next turn does not find it again.
func settleMovedFiles(entries []outbox.JournalEntry) {
	for _, e := range entries {
		for _, f := range outbox.MediaFiles(e) {
			if f.Fallback == "" {
				continue
			}
			root, err := os.OpenRoot(f.Dir)
			if err != nil {
				continue
			}
			if _, err := root.Lstat(f.Path); errors.Is(err, fs.ErrNotExist) {
				_ = root.MkdirAll(path.Dir(f.Path), 0o700)
				_ = root.Rename(f.Fallback, f.Path)
			}
			root.Close()
		}
	}
}

// writeSent writes data to a new file in the workdir's sentDir, for files
// the bridge makes itself (a full diff); it returns the path relative to
// the workdir.
func writeSent(workdir, name string, data []byte, now time.Time) (string, error) {
	root, err := os.OpenRoot(workdir)
	if err != nil {
		return "", fmt.Errorf("open the project directory: %w", err)
	}
	defer root.Close()
	if err := root.MkdirAll(sentDir, 0o700); err != nil {
		return "", fmt.Errorf("create %s: %w", sentDir, err)
	}
	rel := sentDir + "/" + sentName(root, name, now, nil)
	f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("write %s: %w", rel, err)
	}
	_, err = io.Copy(f, bytes.NewReader(data))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = root.Remove(rel)
		return "", fmt.Errorf("write %s: %w", rel, err)
	}
	return rel, nil
}

// prunePhone deletes files sent to the chat longer than [files]
// outbox_keep ago, and kept voice notes older than a day; the uploads
// pruner calls it.
func (b *Bridge) prunePhone(cfg *config.Config) {
	b.pruneVoice(cfg)                      // voice.go
	for _, dir := range projectDirs(cfg) { // projects.go
		n, err := pruneDir(dir, sentDir, cfg.Files.OutboxKeep.Std(), time.Now())
		if err != nil {
			b.log.Warn().Err(err).Msg("prune old sent files")
		} else if n > 0 {
			b.log.Info().Int("files", n).Dur("keep", cfg.Files.OutboxKeep.Std()).Msg("pruned old sent files")
		}
	}
}
