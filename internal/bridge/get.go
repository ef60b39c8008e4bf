package bridge

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/pathglob"
	"github.com/untether/untether/internal/render"
)

// /get PATH sends a file from the project. The path is resolved inside the
// project directory through os.Root (no "..", no symbolic link leads out),
// refused when a [files] deny glob matches it, and refused when it or a
// directory on the way is a symbolic link: a link inside the project could
// point at a denied file under an innocent name. A directory is sent as a
// zip archive when [files] zip_dirs allows, without denied files, links,
// untether's own .untether directories (a worktree's too) and the project's
// .worktrees (each a checkout of its own; /get in the worktree's chat, or
// /get .worktrees/NAME, sends one).

// getUsage answers /get without a path.
const getUsage = "Usage: <code>/get PATH</code> sends a file from the project (a path relative to it, or an absolute one inside it); a directory comes as a zip."

// getTarget is what /get resolved.
type getTarget struct {
	rel  string // slash-separated, relative to the workdir; "." for the root
	info fs.FileInfo
}

// errGetRefused is a /get answer for a path that exists but is not sent;
// its text is shown as is (HTML).
type errGetRefused struct{ html string }

func (e *errGetRefused) Error() string { return e.html }

func refused(format string, a ...any) error {
	return &errGetRefused{html: fmt.Sprintf(format, a...)}
}

// resolveGet turns the user's argument into a checked path inside workdir.
func resolveGet(root *os.Root, workdir, arg string, deny []string) (getTarget, error) {
	arg = strings.TrimSpace(arg)
	if len(arg) >= 2 && (arg[0] == '"' || arg[0] == '\'') && arg[len(arg)-1] == arg[0] {
		arg = arg[1 : len(arg)-1]
	}
	shown := "<code>" + render.EscapeHTML(arg) + "</code>"
	rel := arg
	if filepath.IsAbs(arg) {
		r, err := filepath.Rel(workdir, filepath.Clean(arg))
		if err != nil {
			return getTarget{}, refused("🚫 %s is not inside the project (%s).", shown, render.EscapeHTML(workdir))
		}
		rel = r
	}
	rel = path.Clean(filepath.ToSlash(rel))
	if !filepath.IsLocal(rel) && rel != "." {
		return getTarget{}, refused("🚫 %s is not inside the project (%s).", shown, render.EscapeHTML(workdir))
	}
	if pattern, hit := pathglob.MatchAny(deny, rel); hit {
		return getTarget{}, refused("🔒 %s is refused: it matches the <code>[files] deny</code> pattern <code>%s</code>.", shown, render.EscapeHTML(pattern))
	}
	if rel != "." {
		parts := strings.Split(rel, "/")
		for i := range parts {
			p := strings.Join(parts[:i+1], "/")
			info, err := root.Lstat(p)
			if errors.Is(err, fs.ErrNotExist) {
				return getTarget{}, refused("❓ No such file or directory in the project: %s", shown)
			}
			if err != nil {
				return getTarget{}, refused("⚠️ Cannot read %s: %s", shown, render.EscapeHTML(err.Error()))
			}
			if info.Mode()&fs.ModeSymlink != 0 {
				return getTarget{}, refused("🔒 %s is refused: <code>%s</code> is a symbolic link, and /get does not follow links.", shown, render.EscapeHTML(p))
			}
		}
	}
	info, err := root.Stat(rel)
	if err != nil {
		return getTarget{}, refused("⚠️ Cannot read %s: %s", shown, render.EscapeHTML(err.Error()))
	}
	return getTarget{rel: rel, info: info}, nil
}

// getCommand answers /get PATH.
func (c *chat) getCommand(args string, m *models.Message) {
	if strings.TrimSpace(args) == "" {
		c.reply(getUsage, m.ID)
		return
	}
	cfg := c.b.Config()
	workdir := c.uploadDir(cfg) // projects.go
	if workdir == "" {
		c.reply("⚠️ /get reads files on this machine; this chat's project is on another host.", m.ID)
		return
	}
	root, err := os.OpenRoot(workdir)
	if err != nil {
		c.reply("⚠️ Cannot open the project directory: "+render.EscapeHTML(err.Error()), m.ID)
		return
	}
	target, err := resolveGet(root, workdir, args, cfg.Files.Deny)
	root.Close()
	var r *errGetRefused
	if errors.As(err, &r) {
		c.log.Info().Str("path", args).Msg("/get refused")
		c.reply(r.html, m.ID)
		return
	}
	shown := "<code>" + render.EscapeHTML(target.rel) + "</code>"
	switch {
	case target.info.Mode().IsRegular():
		switch size := target.info.Size(); {
		case size == 0:
			c.reply("📄 "+shown+" is empty; Telegram does not send empty files.", m.ID)
		case size > maxDocumentBytes:
			c.reply(fmt.Sprintf("📄 %s is %s, over the 50 MB Telegram lets a bot send.", shown, humanSize(size)), m.ID)
		default:
			c.b.out.SendMedia(c.ctx(), c.outKey, outbox.High, outbox.Media{Files: []outbox.MediaFile{{Kind: outbox.MediaDocument,
				Dir: workdir, Path: target.rel, Name: path.Base(target.rel), Caption: shown + " · " + humanSize(size)}}},
				outbox.SendOptions{ReplyTo: outbox.MessageID(m.ID), Tag: tagFile})
		}
	case target.info.IsDir() && !cfg.Files.ZipDirs:
		c.reply("📁 "+shown+" is a directory; sending directories as zip archives is off (<code>[files] zip_dirs</code>).", m.ID)
	case target.info.IsDir():
		c.b.out.Typing(c.ctx(), c.outKey)
		// Zipping may take a while: off the actor, with the context and
		// logger taken here (ensureSession replaces c.log).
		go c.sendZip(c.ctx(), c.log, workdir, target.rel, cfg.Files.Deny, m.ID)
	default:
		c.reply("📄 "+shown+" is not a regular file or directory.", m.ID)
	}
}

// sendZip zips a project directory into .untether/sent and sends it.
func (c *chat) sendZip(ctx context.Context, log zerolog.Logger, workdir, rel string, deny []string, replyTo int) {
	shown := "<code>" + render.EscapeHTML(rel) + "</code>"
	name := path.Base(rel)
	if rel == "." {
		name = filepath.Base(workdir)
	}
	zipRel, st, err := writeZip(workdir, rel, name+".zip", deny, time.Now())
	if err != nil {
		log.Warn().Err(err).Str("dir", rel).Msg("/get zip")
		text := "⚠️ Could not zip " + shown + ": " + render.EscapeHTML(err.Error())
		if errors.Is(err, errTooBig) {
			text = "📁 " + shown + " zipped is over the 50 MB Telegram lets a bot send; ask for a smaller directory."
		}
		c.b.out.Send(ctx, c.outKey, outbox.High, outbox.Content{Text: text}, outbox.SendOptions{ReplyTo: outbox.MessageID(replyTo)})
		return
	}
	caption := fmt.Sprintf("%s as a zip · %d %s · %s", shown, st.files, pluralWord(st.files, "file", "files"), humanSize(st.bytes))
	if st.skipped > 0 {
		caption += fmt.Sprintf(" · %d left out (denied by [files] deny, links, .untether, .worktrees)", st.skipped)
	}
	c.b.out.SendMedia(ctx, c.outKey, outbox.High, outbox.Media{Files: []outbox.MediaFile{{Kind: outbox.MediaDocument,
		Dir: workdir, Path: zipRel, Name: name + ".zip", Caption: caption}}},
		outbox.SendOptions{ReplyTo: outbox.MessageID(replyTo), Tag: tagFile})
}

// hasSegment reports whether the slash-separated path p has an element
// named name.
func hasSegment(p, name string) bool {
	for _, s := range strings.Split(p, "/") {
		if s == name {
			return true
		}
	}
	return false
}

// pluralWord is one or many by n, without the number (projects.go's
// plural includes it).
func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

type zipStats struct {
	files, skipped int
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
		return 0, errTooBig
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// writeZip writes a zip of dir (relative to workdir) to a new file in
// .untether/sent and returns its path relative to workdir. Entries are
// named under the directory's base name.
func writeZip(workdir, dir, name string, deny []string, now time.Time) (string, zipStats, error) {
	var st zipStats
	root, err := os.OpenRoot(workdir)
	if err != nil {
		return "", st, fmt.Errorf("open the project directory: %w", err)
	}
	defer root.Close()
	if err := root.MkdirAll(sentDir, 0o700); err != nil {
		return "", st, fmt.Errorf("create %s: %w", sentDir, err)
	}
	zipRel := sentDir + "/" + sentName(root, name, now, nil)
	out, err := root.OpenFile(zipRel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", st, fmt.Errorf("create the archive: %w", err)
	}
	cw := &countingWriter{w: out, limit: maxDocumentBytes}
	zw := zip.NewWriter(cw)
	prefix := strings.TrimSuffix(name, ".zip")
	walkErr := fs.WalkDir(root.FS(), dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			st.skipped++
			return nil // unreadable: left out, not fatal
		}
		// untether's own files are left out wherever they are (a worktree
		// has its own .untether), and so are the worktrees inside the
		// directory asked for: each is a whole checkout of its own.
		sub := strings.TrimPrefix(strings.TrimPrefix(p, dir), "/")
		if dir == "." {
			sub = p
		}
		if hasSegment(p, untetherDir) || d.IsDir() && hasSegment(sub, worktreesDir) {
			st.skipped++
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if _, hit := pathglob.MatchAny(deny, p); hit && p != dir {
			st.skipped++
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			st.skipped++ // links and devices are never followed
			return nil
		}
		info, err := d.Info()
		if err != nil {
			st.skipped++
			return nil
		}
		hdr, err := zip.FileInfoHeader(info)
		if err != nil {
			return fmt.Errorf("zip %s: %w", p, err)
		}
		hdr.Name, hdr.Method = prefix+"/"+sub, zip.Deflate
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			return fmt.Errorf("zip %s: %w", p, err)
		}
		f, err := root.Open(p)
		if err != nil {
			st.skipped++
			return nil
		}
		_, err = io.Copy(w, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("zip %s: %w", p, err)
		}
		st.files++
		return nil
	})
	if walkErr == nil {
		walkErr = zw.Close()
	}
	if cerr := out.Close(); walkErr == nil {
		walkErr = cerr
	}
	if walkErr != nil {
		_ = root.Remove(zipRel)
		if errors.Is(walkErr, errTooBig) {
			return "", st, errTooBig
		}
		return "", st, walkErr
	}
	st.bytes = cw.n
	return zipRel, st, nil
}
