package files

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/owndir"
	"github.com/untether/untether/internal/pathglob"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/safefs"
)

// /get DIRECTORY sends a zip of it, without denied files, links, FIFOs and
// devices, untether's own .untether directories (a worktree's too) and the
// project's .worktrees (each a checkout of its own; /get in the worktree's
// chat, or /get .worktrees/NAME, sends one). The directory is walked
// through safefs (no link followed, nothing opened that could block), and
// the work is bounded: at most zipMaxRead bytes read, zipMaxEntries files
// and directories, zipTimeout of time, and one zip at a time per chat
// (get.go), since a tool can leave a sparse file of a terabyte or a million
// empty files in the project.

// Bounds of one zip; variables so that tests can lower them.
var (
	zipMaxRead    int64 = 256 << 20
	zipMaxEntries       = 10000
	zipTimeout          = 2 * time.Minute
)

// beforeZipOpen, when set, runs between a file's listing and its opening:
// tests swap the file there, as a tool running meanwhile could, or hold a
// zip there.
var beforeZipOpen atomic.Pointer[func(rel string)]

// Errors of a zip that went over a bound.
var (
	errZipRead    = errors.New("more to read than a zip may hold")
	errZipEntries = errors.New("more files and directories than a zip may hold")
	errZipSlow    = errors.New("zipping took too long")
)

// sendZip zips a project directory into .untether/sent, off the actor, and
// returns what sends it from the actor; the chat's zipping flag, set by
// the caller, is cleared once the zip is written (or failed).
func (m *Module) sendZip(ctx context.Context, c *chat.Chat, z *chatFiles, workdir, rel string, deny []string, replyTo int) (send func()) {
	shown := render.Code(rel)
	name := path.Base(rel)
	if rel == "." {
		name = filepath.Base(workdir)
	}
	zctx, cancel := context.WithTimeout(ctx, zipTimeout)
	f, zipRel, st, err := writeZip(zctx, workdir, rel, name+".zip", deny, time.Now())
	cancel()
	z.zipping.Store(false)
	if err != nil {
		m.dirs.Refused(err)
		zerolog.Ctx(ctx).Warn().Err(err).Str("dir", rel).Msg("/get zip")
		return func() {
			c.SendMessage(outbox.High, outbox.Content{Text: zipFailure(shown, err)}, outbox.SendOptions{ReplyTo: outbox.MessageID(replyTo)})
		}
	}
	caption := fmt.Sprintf("%s as a zip · %d %s · %s", shown, st.files, render.PluralWord(st.files, "file", "files"), render.FormatSize(st.bytes))
	if st.skipped > 0 {
		caption += fmt.Sprintf(" · %d left out (denied by [files] deny, links, .untether, .worktrees)", st.skipped)
	}
	// Sent from the descriptor written (the outbox closes it): the name
	// in .untether/sent may be something else by the time of the upload.
	return func() {
		c.SendMedia(outbox.High, outbox.Media{Files: []outbox.MediaFile{{Kind: outbox.MediaDocument,
			Dir: workdir, Path: zipRel, Name: name + ".zip", Caption: caption, File: f}}},
			outbox.SendOptions{ReplyTo: outbox.MessageID(replyTo), Tag: tagFile})
	}
}

// zipFailure is the answer to a /get whose zip failed.
func zipFailure(shown string, err error) string {
	switch {
	case errors.Is(err, owndir.ErrTooBig):
		return "📁 " + shown + " zipped is over the 50 MB Telegram lets a bot send; ask for a smaller directory."
	case errors.Is(err, errZipRead):
		return "📁 " + shown + " holds more than " + render.FormatSize(zipMaxRead) + " of files, more than /get zips; ask for a smaller directory."
	case errors.Is(err, errZipEntries):
		return "📁 " + shown + " has more than " + strconv.Itoa(zipMaxEntries) + " files and directories, more than /get zips; ask for a smaller directory."
	case errors.Is(err, errZipSlow):
		return "📁 Zipping " + shown + " took longer than " + zipTimeout.String() + ", so it was stopped; ask for a smaller directory."
	}
	return "⚠️ Could not zip " + shown + ": " + render.EscapeHTML(err.Error())
}

type zipStats struct {
	files, skipped int
	entries        int   // files and directories looked at
	read           int64 // bytes read from the project
	bytes          int64 // of the archive
}

// countingWriter fails once more than limit bytes were written.
type countingWriter struct {
	w     io.Writer
	n     int64
	limit int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.n+int64(len(p)) > c.limit {
		return 0, owndir.ErrTooBig
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// ctxReader stops a copy once ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if c.ctx.Err() != nil {
		return 0, errZipSlow
	}
	return c.r.Read(p)
}

// zipWalk is one zip being written.
type zipWalk struct {
	ctx    context.Context
	zw     *zip.Writer
	deny   []string
	dir    string // the directory asked for, relative to the workdir
	prefix string // the entries' top directory
	st     zipStats
}

// writeZip writes a zip of dir (relative to workdir) to a new file in
// .untether/sent and returns it, open, with its path relative to workdir.
// Entries are named under the directory's base name.
func writeZip(ctx context.Context, workdir, dir, name string, deny []string, now time.Time) (*os.File, string, zipStats, error) {
	src, err := owndir.Open(workdir, dir, false)
	if err != nil {
		return nil, "", zipStats{}, err
	}
	defer src.Close()
	out, zipRel, sent, err := owndir.CreateSent(workdir, name, now)
	if err != nil {
		return nil, "", zipStats{}, err
	}
	defer sent.Close()
	cw := &countingWriter{w: out, limit: maxDocumentBytes}
	w := &zipWalk{ctx: ctx, zw: zip.NewWriter(cw), deny: deny, dir: dir, prefix: stripZip(name)}
	err = w.walk(src, "")
	if err == nil {
		err = w.zw.Close()
	}
	if err != nil {
		out.Close()
		_ = sent.Remove(path.Base(zipRel))
		return nil, "", w.st, err
	}
	w.st.bytes = cw.n
	return out, zipRel, w.st, nil
}

func stripZip(name string) string { return name[:len(name)-len(path.Ext(name))] }

// walk adds what d holds; sub is d's path below the directory asked for.
func (w *zipWalk) walk(d *safefs.Dir, sub string) error {
	names, err := d.Names(zipMaxEntries - w.st.entries + 1)
	if err != nil {
		w.st.skipped++
		return nil // unreadable: left out, not fatal
	}
	slices.Sort(names)
	for _, n := range names {
		if w.st.entries++; w.st.entries > zipMaxEntries {
			return errZipEntries
		}
		if w.ctx.Err() != nil {
			return errZipSlow
		}
		if err := w.add(d, sub, n); err != nil {
			return err
		}
	}
	return nil
}

// add adds the entry name of d.
func (w *zipWalk) add(d *safefs.Dir, sub, name string) error {
	s := path.Join(sub, name)
	p := path.Join(w.dir, s) // relative to the workdir, as deny patterns are
	info, err := d.Lstat(name)
	if err != nil {
		w.st.skipped++
		return nil
	}
	// untether's own files are left out wherever they are (a worktree has
	// its own .untether), and so are the worktrees inside the directory
	// asked for: each is a whole checkout of its own.
	_, denied := pathglob.MatchAny(w.deny, p)
	if name == owndir.Root || info.IsDir() && hasSegment(s, chat.WorktreesDir) || denied {
		w.st.skipped++
		return nil
	}
	if info.IsDir() {
		child, err := d.Sub(name, false) // a swap for a link since Lstat is refused here
		if err != nil {
			w.st.skipped++
			return nil
		}
		defer child.Close()
		return w.walk(child, s)
	}
	if !info.Mode().IsRegular() {
		w.st.skipped++ // links, FIFOs and devices are never followed or opened
		return nil
	}
	if info.Size() > zipMaxRead-w.st.read {
		return errZipRead // known before reading a byte: a sparse file of a terabyte costs nothing
	}
	if hook := beforeZipOpen.Load(); hook != nil {
		(*hook)(p)
	}
	f, err := d.Open(name)
	if err != nil {
		w.st.skipped++ // not a regular file any more
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		w.st.skipped++
		return nil
	}
	if fi.Size() > zipMaxRead-w.st.read {
		return errZipRead
	}
	hdr, err := zip.FileInfoHeader(fi)
	if err != nil {
		return fmt.Errorf("zip %s: %w", p, err)
	}
	hdr.Name, hdr.Method = w.prefix+"/"+s, zip.Deflate
	zf, err := w.zw.CreateHeader(hdr)
	if err != nil {
		return fmt.Errorf("zip %s: %w", p, err)
	}
	// At most the size fstat gave: a file growing meanwhile is cut there.
	n, err := io.Copy(zf, ctxReader{ctx: w.ctx, r: io.LimitReader(f, fi.Size())})
	w.st.read += n
	if err != nil {
		if errors.Is(err, owndir.ErrTooBig) || errors.Is(err, errZipSlow) {
			return err
		}
		return fmt.Errorf("zip %s: %w", p, err)
	}
	w.st.files++
	return nil
}

// HoldZips (for the bridge's full-stack tests) makes every /get zip wait, before it opens each
// file, until the returned release is called: a zip still being made.
func HoldZips() (release func()) {
	gate := make(chan struct{})
	hook := func(string) { <-gate }
	beforeZipOpen.Store(&hook)
	return func() {
		beforeZipOpen.Store(nil)
		close(gate)
	}
}
