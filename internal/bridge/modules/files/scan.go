package files

import (
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

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/owndir"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/safefs"
)

// What a turn's end finds in the chat's outbox directory (files.go),
// and the one message that says what was not sent.

// maxOutboxScan bounds the entries one turn's end looks at, so a tool
// that fills the outbox with millions of files costs the actor a bounded
// moment; the rest wait for the next turn.
const maxOutboxScan = 10000

// maxNotSentNamed is how many files the "not sent" message names one by
// one; the rest are counted by reason.
const maxNotSentNamed = 10

// outgoingFile is an entry found in the outbox directory.
type outgoingFile struct {
	name string
	kind outbox.MediaKind
	size int64
	file *os.File // open, for a file to send
	// skip, when set, says why the entry is not sent; short is the reason
	// counted in the summary.
	skip, short string
	dir         bool // a directory: never moved
}

// scanOutbox lists the outbox directory: up to perTurn regular files to
// send, opened, and the entries not sent with the reason. more reports
// entries beyond maxOutboxScan, left for the next turn. The caller closes
// the files it does not hand to the outbox (closeFiles).
func scanOutbox(out *safefs.Dir, perTurn int) (files []outgoingFile, more bool, err error) {
	names, err := out.Names(maxOutboxScan + 1)
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", out.Name(), err)
	}
	if len(names) > maxOutboxScan {
		names, more = names[:maxOutboxScan], true
	}
	slices.Sort(names)
	sending := 0
	for _, name := range names {
		info, err := out.Lstat(name)
		if err != nil {
			continue // gone meanwhile
		}
		f := outgoingFile{name: name, size: info.Size(), kind: outbox.MediaDocument}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			f.skip, f.short = "is a symbolic link; only regular files are sent", "links"
		case info.IsDir():
			f.skip, f.short, f.dir = "is a directory; only files directly in the outbox directory are sent, and it is left where it is", "directories", true
		case !info.Mode().IsRegular():
			f.skip, f.short = "is not a regular file", "not regular files"
		case info.Size() == 0:
			f.skip, f.short = "is empty", "empty"
		case info.Size() > maxDocumentBytes:
			f.skip, f.short = fmt.Sprintf("is %s, over the 50 MB Telegram lets a bot send", render.FormatSize(info.Size())), "over 50 MB"
		case sending >= perTurn:
			f.skip, f.short = fmt.Sprintf("was not sent: at most %d files are sent a turn ([files] max_files_per_turn)", perTurn),
				fmt.Sprintf("over the %d files sent a turn ([files] max_files_per_turn)", perTurn)
		default:
			f = openOutgoing(out, f)
			if f.file != nil {
				sending++
			}
		}
		files = append(files, f)
	}
	return files, more, nil
}

// openOutgoing opens a regular file of the outbox once, and checks on
// that descriptor what the listing said: a file swapped meanwhile for a
// FIFO, a device or a link is not sent, and opening it never blocks.
func openOutgoing(out *safefs.Dir, f outgoingFile) outgoingFile {
	fh, err := out.Open(f.name)
	if err != nil {
		f.skip, f.short = "could not be opened as a regular file: "+errText(err), "not regular files"
		return f
	}
	info, err := fh.Stat()
	switch {
	case err != nil:
		f.skip, f.short = "could not be read: "+errText(err), "unreadable"
	case info.Size() == 0:
		f.skip, f.short = "is empty", "empty"
	case info.Size() > maxDocumentBytes:
		f.skip, f.short = fmt.Sprintf("is %s, over the 50 MB Telegram lets a bot send", render.FormatSize(info.Size())), "over 50 MB"
	default:
		f.file, f.size = fh, info.Size()
		if isPhoto(fh, f.size) {
			f.kind = outbox.MediaPhoto
		}
		return f
	}
	fh.Close()
	return f
}

// errText is an error without the path it names (the message names it).
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// isPhoto reports whether a file can go as a photo: a JPEG or PNG within
// Telegram's photo limits. Anything else goes as a document, which keeps
// its bytes exactly. It reads the open file at its offsets (ReadAt), so
// what is sent is read from the start.
func isPhoto(f *os.File, size int64) bool {
	if size > maxPhotoBytes {
		return false
	}
	head := make([]byte, 512)
	n, _ := f.ReadAt(head, 0)
	if mt := http.DetectContentType(head[:n]); mt != "image/png" && mt != "image/jpeg" {
		return false
	}
	cfg, _, err := image.DecodeConfig(io.NewSectionReader(f, 0, size))
	w, h := cfg.Width, cfg.Height
	return err == nil && w > 0 && h > 0 && w+h <= maxPhotoSides && max(w, h) <= maxPhotoRatio*min(w, h)
}

func closeFiles(files []outgoingFile) {
	for _, f := range files {
		if f.file != nil {
			f.file.Close()
		}
	}
}

// deliverOutbox sends what Claude left in the outbox directory, replying
// to replyTo. It runs on the actor at the end of a turn: listing a
// directory and reading a few image headers is quick, opening never blocks,
// and the uploads themselves happen in the outbox.
func (m *Module) deliverOutbox(c *chat.Chat, replyTo int) {
	m.deliverOutboxIn(c, c.UploadDir(c.Config()), replyTo)
}

// deliverOutboxIn is deliverOutbox for the CLI that ran in workdir (the engine's turn end
// uses it when the process dies mid-turn).
func (m *Module) deliverOutboxIn(c *chat.Chat, workdir string, replyTo int) {
	if workdir == "" {
		return // a project on another host: its outbox is not on this machine, and Claude was not told of one
	}
	outboxDir := chatOutbox(c.Key())
	out, err := m.dirs.Open(workdir, outboxDir, false)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, owndir.ErrWorkdirGone):
		return // nothing left there; a gone project directory is reported by the next message
	case err != nil:
		m.outboxRefused(c, err, outboxDir, replyTo)
		return
	}
	defer out.Close()
	files, more, err := scanOutbox(out, c.Config().Files.MaxFilesPerTurn)
	if err != nil {
		c.Log().Warn().Err(err).Msg("read the outbox directory")
		return
	}
	defer closeFiles(files) // those not handed to the outbox
	if len(files) == 0 && !more {
		return
	}
	sent, err := m.dirs.Open(workdir, owndir.Sent, true)
	if err != nil {
		m.outboxRefused(c, err, outboxDir, replyTo)
		return
	}
	defer sent.Close()
	now := time.Now()
	var photos, docs []outbox.MediaFile
	var notes []notSent
	taken := map[string]bool{}
	for i, f := range files {
		if f.dir {
			if !m.state.Get(c).outboxDirs[f.name] { // reported once; it stays there
				notes = append(notes, notSent{name: f.name, why: f.skip, short: f.short, at: outboxDir + "/" + f.name})
			}
			continue
		}
		dest := owndir.SentName(sent, f.name, now, taken)
		if f.file == nil {
			at := owndir.Sent + "/" + dest
			if err := out.Rename(f.name, sent, dest); err != nil {
				c.Log().Warn().Err(err).Str("file", f.name).Msg("move a file that is not sent")
				at = outboxDir + "/" + f.name
			}
			notes = append(notes, notSent{name: f.name, why: f.skip, short: f.short, at: at})
			continue
		}
		mf := outbox.MediaFile{Kind: f.kind, Dir: workdir, Path: owndir.Sent + "/" + dest, Fallback: outboxDir + "/" + f.name, Name: f.name, File: f.file}
		files[i].file = nil // the outbox owns it now
		if f.kind == outbox.MediaPhoto {
			mf.Caption = render.EscapeHTML(f.name)
			photos = append(photos, mf)
		} else {
			docs = append(docs, mf)
		}
	}
	m.rememberOutboxDirs(c, files)
	for _, group := range append(chunkFiles(photos), chunkFiles(docs)...) {
		c.SendMedia(outbox.High, outbox.Media{Files: group},
			outbox.SendOptions{ReplyTo: outbox.MessageID(replyTo), Tag: tagFile})
		replyTo = 0 // the first message answers the question; the rest follow it
		for _, mf := range group {
			// Journaled first (naming both places), moved second: see
			// files.go. What is sent is the descriptor, whatever the
			// move finds.
			if err := out.Rename(path.Base(mf.Fallback), sent, path.Base(mf.Path)); err != nil {
				c.Log().Warn().Err(err).Str("file", mf.Name).Msg("move a sent file to " + owndir.Sent)
			}
		}
	}
	c.Log().Info().Int("photos", len(photos)).Int("documents", len(docs)).Int("not_sent", len(notes)).Bool("more", more).Msg("sending files from the outbox")
	if text := notSentMessage(workdir, outboxDir, notes, more); text != "" {
		c.Reply(text, 0)
	}
}

// rememberOutboxDirs keeps the names of the directories found in the
// outbox, so each is reported once, not at every turn's end.
func (m *Module) rememberOutboxDirs(c *chat.Chat, files []outgoingFile) {
	dirs := map[string]bool{}
	for _, f := range files {
		if f.dir {
			dirs[f.name] = true
		}
	}
	m.state.Get(c).outboxDirs = dirs
}

// outboxRefused tells the chat, once, that its outbox (or owndir.Sent) is not
// a real directory, so its files are not sent.
func (m *Module) outboxRefused(c *chat.Chat, err error, outboxDir string, replyTo int) {
	if !m.dirs.TellChat(err, c.Key()) {
		if _, ok := errors.AsType[*owndir.Error](err); !ok {
			c.Log().Warn().Err(err).Msg("open the outbox")
		}
		return
	}
	c.Reply("⚠️ Files Claude leaves in <code>"+render.EscapeHTML(outboxDir)+"/</code> are not sent: "+
		render.EscapeHTML(err.Error())+". Remove it to have files sent again.", replyTo)
}

// notSent is an outbox entry that was not sent.
type notSent struct {
	name, why, short string
	at               string // where it is now, relative to the workdir
}

// notSentMessage is the one message saying what was not sent: the first
// few entries by name, the rest counted by reason and by where they are.
func notSentMessage(workdir, outboxDir string, notes []notSent, more bool) string {
	if len(notes) == 0 && !more {
		return ""
	}
	var b strings.Builder
	b.WriteString("📎 Not sent:")
	for _, n := range notes[:min(len(notes), maxNotSentNamed)] {
		fmt.Fprintf(&b, "\n• <code>%s</code> %s; it is at <code>%s</code>", render.EscapeHTML(shortName(n.name)),
			render.EscapeHTML(n.why), render.EscapeHTML(path.Join(workdir, n.at)))
	}
	if rest := notes[min(len(notes), maxNotSentNamed):]; len(rest) > 0 {
		var reasons []string
		counts := map[string]int{}
		places := map[string]int{}
		for _, n := range rest {
			if counts[n.short] == 0 {
				reasons = append(reasons, n.short)
			}
			counts[n.short]++
			places[path.Dir(n.at)]++
		}
		parts := make([]string, len(reasons))
		for i, r := range reasons {
			parts[i] = strconv.Itoa(counts[r]) + " " + r
		}
		var where []string
		for _, d := range []string{owndir.Sent, outboxDir} {
			if places[d] > 0 {
				where = append(where, fmt.Sprintf("%d in <code>%s/</code>", places[d], render.EscapeHTML(path.Join(workdir, d))))
			}
		}
		fmt.Fprintf(&b, "\n• …and %d more: %s (%s)", len(rest), render.EscapeHTML(strings.Join(parts, ", ")), strings.Join(where, ", "))
	}
	if more {
		fmt.Fprintf(&b, "\n• more than %d entries are in <code>%s/</code>; the rest are looked at when the next turn ends", maxOutboxScan,
			render.EscapeHTML(path.Join(workdir, outboxDir)))
	}
	return b.String()
}

// shortName keeps a name shown in a message readable.
func shortName(name string) string {
	if r := []rune(name); len(r) > 80 {
		return string(r[:79]) + "…"
	}
	return name
}
