package phone

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/owndir"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// Photos and documents users send reach Claude without blocking the chat:
// the actor only checks the size Telegram announced and queues the message;
// the download and the write to disk run in the goroutine that hands the
// message to the CLI (outgoing.prepare), in the order the messages came.

// maxInlineImage is the largest picture sent to Claude inline, as an image
// block: the API refuses image data whose base64 form exceeds 5 MB, i.e.
// 3.75 MB of raw bytes. Larger pictures are saved as files like any other.
const maxInlineImage = (5 << 20) / 4 * 3

// imageTypes are the image formats Claude accepts inline.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// uploadError is an attachment that could not be passed to Claude; its text
// is shown to the user as is.
type uploadError struct{ err error }

func (e *uploadError) Error() string { return e.err.Error() }
func (e *uploadError) Unwrap() error { return e.err }

// UserText is what the user is told (the engine shows it as it is).
func (e *uploadError) UserText() string {
	return "⚠️ Could not pass this file to Claude: " + render.EscapeHTML(e.err.Error())
}

// attachment is what the actor learned about a photo or document.
type attachment struct {
	fileID   string
	name     string // the document's file name; "" for photos
	size     int64  // as Telegram announced it; 0 when it did not
	photo    bool
	caption  string
	workdir  string
	limitMB  int
	received time.Time
}

func attachmentOf(m *models.Message) (attachment, bool) {
	a := attachment{caption: m.Caption, received: time.Now()}
	switch {
	case len(m.Photo) > 0:
		largest := m.Photo[len(m.Photo)-1]
		a.fileID, a.size, a.photo = largest.FileID, int64(largest.FileSize), true
	case m.Document != nil:
		a.fileID, a.size, a.name = m.Document.FileID, m.Document.FileSize, m.Document.FileName
	default:
		return a, false
	}
	return a, true
}

// sendAttachment queues a photo or document for Claude. A file bigger than
// the limit is refused at once, before anything is downloaded.
func (ph *Module) sendAttachment(c *chat.Chat, m *models.Message) {
	a, _ := attachmentOf(m)
	cfg := c.Config()
	a.workdir, a.limitMB = c.UploadDir(cfg), cfg.Files.MaxUploadMB
	if a.size > cfg.Files.MaxUploadBytes() {
		c.Reply((&uploadError{owndir.TooBig(a.limitMB)}).UserText(), m.ID)
		return
	}
	label := "a photo"
	if !a.photo {
		label = "the file " + a.name
	}
	log := *c.Log()
	c.SendOutgoing(chat.NewOutgoing(runner.UserInput{}, m.ID, chat.SenderOf(m)).WithLabel(label).PrepareWith(func(ctx context.Context) (runner.UserInput, error) {
		in, err := ph.attachmentInput(ctx, a, log)
		if err != nil {
			log.Warn().Err(err).Msg("attachment")
			return in, &uploadError{err}
		}
		return in, nil
	}))
}

// attachmentInput downloads an attachment and turns it into Claude input:
// pictures small enough go inline as image blocks; anything else is saved
// under the workdir's .untether/uploads and Claude is told its path, so it
// can read it with its own tools. It runs off the actor.
func (ph *Module) attachmentInput(ctx context.Context, a attachment, log zerolog.Logger) (runner.UserInput, error) {
	in := runner.UserInput{Text: a.caption}
	limit := int64(a.limitMB) << 20
	body, err := ph.host.Download(ctx, a.fileID, a.limitMB)
	if err != nil {
		return in, err
	}
	defer body.Close()
	// Read what could be inlined; a picture that fits goes inline.
	head, err := io.ReadAll(io.LimitReader(body, maxInlineImage+1))
	if err != nil {
		return in, fmt.Errorf("download the file: %w", ph.host.Redact(err))
	}
	mt := http.DetectContentType(head)
	if len(head) <= maxInlineImage && imageTypes[mt] {
		in.Images = append(in.Images, runner.Image{MediaType: mt, Data: head})
		if in.Text == "" {
			in.Text = "(The user sent this picture without a caption.)"
			if !a.photo {
				in.Text = "(The user sent this picture as a file.)"
			}
		}
		return in, nil
	}
	if a.photo && !imageTypes[mt] {
		return in, fmt.Errorf("the photo is %s, not an image Claude can read", mt)
	}
	if a.workdir == "" {
		// A project on another host cannot read this machine's files.
		return in, errors.New("only pictures (up to about 3.7 MB) reach a project on another host; other files would be saved on this machine, where Claude cannot read them")
	}
	name := a.name
	if name == "" {
		name = "photo" + extensionOf(mt)
	}
	path, n, err := owndir.SaveUpload(a.workdir, name, io.MultiReader(bytes.NewReader(head), body), limit, a.received)
	if errors.Is(err, owndir.ErrTooBig) {
		return in, owndir.TooBig(a.limitMB)
	}
	if err != nil {
		return in, err
	}
	log.Info().Str("path", path).Int64("bytes", n).Msg("saved an upload")
	what := fmt.Sprintf("the file %q", a.name)
	if a.name == "" {
		what = "a picture too large to show inline"
	}
	note := fmt.Sprintf("[The user attached %s; it is saved at %s (%d bytes).]", what, path, n)
	if in.Text == "" {
		in.Text = note
	} else {
		in.Text += "\n\n" + note
	}
	return in, nil
}

// extensionOf is a file extension for a sniffed content type.
func extensionOf(mediaType string) string {
	switch mediaType {
	case "image/jpeg":
		return ".jpg"
	case "image/png":
		return ".png"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	}
	return ""
}
