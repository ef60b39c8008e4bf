package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/owndir"
	"github.com/untether/untether/internal/pathglob"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/safefs"
)

// /get PATH sends a file from the project. The path must stay inside the
// project directory (no ".."), is refused when a [files] deny glob matches
// it or when it is in untether's own .untether directories (uploads, and
// the files sent to every chat of the project), and is opened through
// safefs: refused when it or a directory on the way is a symbolic link (a
// link inside the project could point at a denied file under an innocent
// name), opened once without blocking and sent from that descriptor, so a
// swap after the check sends nothing else. A directory is sent as a zip
// archive when [files] zip_dirs allows (zip.go).

// getUsage answers /get without a path.
const getUsage = "Usage: <code>/get PATH</code> sends a file from the project (a path relative to it, or an absolute one inside it); a directory comes as a zip."

// getTarget is what /get resolved.
type getTarget struct {
	rel  string // slash-separated, relative to the workdir; "." for the root
	info fs.FileInfo
	file *os.File // a regular file, open; the caller closes or sends it
}

// errGetRefused is a /get answer for a path that exists but is not sent;
// its text is shown as is (HTML).
type errGetRefused struct{ html string }

func (e *errGetRefused) Error() string { return e.html }

func refused(format string, a ...any) error {
	return &errGetRefused{html: fmt.Sprintf(format, a...)}
}

// resolveGet turns the user's argument into a checked path inside workdir,
// opened when it is a regular file.
func resolveGet(workdir, arg string, deny []string) (getTarget, error) {
	arg = strings.TrimSpace(arg)
	if len(arg) >= 2 && (arg[0] == '"' || arg[0] == '\'') && arg[len(arg)-1] == arg[0] {
		arg = arg[1 : len(arg)-1]
	}
	shown := render.Code(arg)
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
	if hasSegment(rel, owndir.Root) {
		// Uploads, and the files sent to every chat of the project: not
		// this chat's to fetch.
		return getTarget{}, refused("🔒 %s is refused: <code>%s</code> holds untether's own files (uploads, and the files sent to each chat), which /get does not send.", shown, owndir.Root)
	}
	base, err := safefs.OpenBase(workdir)
	if err != nil {
		return getTarget{}, refused("⚠️ Cannot open the project directory: %s", render.EscapeHTML(errText(err)))
	}
	defer base.Close()
	if rel == "." {
		info, err := os.Stat(workdir)
		if err != nil {
			return getTarget{}, refused("⚠️ Cannot read %s: %s", shown, render.EscapeHTML(err.Error()))
		}
		return getTarget{rel: rel, info: info}, nil
	}
	parent, err := base.Sub(path.Dir(rel), false)
	if err != nil {
		return getTarget{}, getError(shown, err)
	}
	defer parent.Close()
	name := path.Base(rel)
	info, err := parent.Lstat(name)
	if err != nil {
		return getTarget{}, getError(shown, err)
	}
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		return getTarget{}, getError(shown, &fs.PathError{Op: "open", Path: rel, Err: safefs.ErrSymlink})
	case info.IsDir():
		return getTarget{rel: rel, info: info}, nil
	case !info.Mode().IsRegular():
		return getTarget{rel: rel, info: info}, nil // answered as neither file nor directory
	}
	f, err := parent.Open(name)
	if err != nil {
		return getTarget{}, getError(shown, err)
	}
	if info, err = f.Stat(); err != nil {
		f.Close()
		return getTarget{}, getError(shown, err)
	}
	return getTarget{rel: rel, info: info, file: f}, nil
}

// getError answers a path that could not be opened.
func getError(shown string, err error) error {
	var pe *fs.PathError
	switch {
	case errors.Is(err, safefs.ErrSymlink) && errors.As(err, &pe):
		return refused("🔒 %s is refused: <code>%s</code> is a symbolic link, and /get does not follow links.", shown, render.EscapeHTML(pe.Path))
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, safefs.ErrNotDir):
		return refused("❓ No such file or directory in the project: %s", shown)
	case errors.Is(err, safefs.ErrNotRegular):
		return refused("📄 %s is not a regular file or directory.", shown)
	}
	return refused("⚠️ Cannot read %s: %s", shown, render.EscapeHTML(errText(err)))
}

// getCommand answers /get PATH.
func (m *Module) getCommand(c *chat.Chat, args string, msg *models.Message) {
	if strings.TrimSpace(args) == "" {
		c.Reply(getUsage, msg.ID)
		return
	}
	cfg := c.Config()
	workdir := c.UploadDir(cfg)
	if workdir == "" {
		c.Reply("⚠️ /get reads files on this machine; this chat's project is on another host.", msg.ID)
		return
	}
	target, err := resolveGet(workdir, args, cfg.Files.Deny)
	var r *errGetRefused
	if errors.As(err, &r) {
		c.Log().Info().Str("path", args).Msg("/get refused")
		c.Reply(r.html, msg.ID)
		return
	}
	shown := render.Code(target.rel)
	switch {
	case target.file != nil:
		switch size := target.info.Size(); {
		case size == 0:
			target.file.Close()
			c.Reply("📄 "+shown+" is empty; Telegram does not send empty files.", msg.ID)
		case size > maxDocumentBytes:
			target.file.Close()
			c.Reply(fmt.Sprintf("📄 %s is %s, over the 50 MB Telegram lets a bot send.", shown, render.FormatSize(size)), msg.ID)
		default:
			// The descriptor checked is the one sent (the outbox closes it).
			c.SendMedia(outbox.High, outbox.Media{Files: []outbox.MediaFile{{Kind: outbox.MediaDocument,
				Dir: workdir, Path: target.rel, Name: path.Base(target.rel), Caption: shown + " · " + render.FormatSize(size), File: target.file}}},
				outbox.SendOptions{ReplyTo: outbox.MessageID(msg.ID), Tag: tagFile})
		}
	case target.info.IsDir() && !cfg.Files.ZipDirs:
		c.Reply("📁 "+shown+" is a directory; sending directories as zip archives is off (<code>[files] zip_dirs</code>).", msg.ID)
	case target.info.IsDir():
		z := m.state.Get(c)
		if !z.zipping.CompareAndSwap(false, true) {
			c.Reply("📁 A directory of this chat is still being zipped, and /get zips one at a time; ask for "+shown+" again once it has arrived.", msg.ID)
			return
		}
		c.Typing()
		// Zipping may take a while: off the actor; the zip is sent from it.
		c.Offload(func(ctx context.Context) func() {
			return m.sendZip(ctx, c, z, workdir, target.rel, cfg.Files.Deny, msg.ID)
		}) // zip.go
	default:
		c.Reply("📄 "+shown+" is not a regular file or directory.", msg.ID)
	}
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
