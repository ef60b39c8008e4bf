package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/runner"
)

// maxDownload is the Bot API's getFile limit; bigger files cannot be
// fetched by a bot at all.
const maxDownload = 20 << 20

// errTooBig marks an attachment over maxDownload.
var errTooBig = errors.New("the file is larger than the 20 MB a bot may download")

// download fetches a file a user sent.
func (b *Bridge) download(ctx context.Context, fileID string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	f, err := b.bot.GetFile(ctx, &bot.GetFileParams{FileID: fileID})
	if err != nil {
		return nil, fmt.Errorf("get file: %w", redactErr(err, b.Config()))
	}
	if f.FileSize > maxDownload {
		return nil, errTooBig
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.bot.FileDownloadLink(f), nil)
	if err != nil {
		return nil, fmt.Errorf("download file: %w", redactErr(err, b.Config()))
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("download file: %w", redactErr(err, b.Config()))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("download file: HTTP %d", resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxDownload+1))
	if err != nil {
		return nil, fmt.Errorf("download file: %w", redactErr(err, b.Config()))
	}
	if len(data) > maxDownload {
		return nil, errTooBig
	}
	return data, nil
}

// imageTypes are the image formats Claude accepts inline.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// attachmentInput turns a photo or document message into Claude input:
// pictures go inline as image blocks; any other file is saved under the
// workdir's .untether/uploads and Claude is told its path, so it can read
// it with its own tools.
func (c *chat) attachmentInput(m *models.Message, workdir string) (runner.UserInput, error) {
	in := runner.UserInput{Text: m.Caption}
	ctx := c.ctx()
	switch {
	case len(m.Photo) > 0:
		largest := m.Photo[len(m.Photo)-1]
		data, err := c.b.download(ctx, largest.FileID)
		if err != nil {
			return in, err
		}
		mt := http.DetectContentType(data)
		if !imageTypes[mt] {
			return in, fmt.Errorf("the photo is %s, not an image Claude can read", mt)
		}
		in.Images = append(in.Images, runner.Image{MediaType: mt, Data: data})
		if in.Text == "" {
			in.Text = "(The user sent this picture without a caption.)"
		}
		return in, nil
	case m.Document != nil:
		data, err := c.b.download(ctx, m.Document.FileID)
		if err != nil {
			return in, err
		}
		if mt := http.DetectContentType(data); imageTypes[mt] {
			in.Images = append(in.Images, runner.Image{MediaType: mt, Data: data})
			if in.Text == "" {
				in.Text = "(The user sent this picture as a file.)"
			}
			return in, nil
		}
		dir := filepath.Join(workdir, ".untether", "uploads")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return in, fmt.Errorf("save the file: %w", err)
		}
		name := strings.Trim(unsafeName.ReplaceAllString(filepath.Base(m.Document.FileName), "_"), "._")
		if name == "" {
			name = "file"
		}
		path := filepath.Join(dir, time.Now().UTC().Format("20060102-150405")+"-"+name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return in, fmt.Errorf("save the file: %w", err)
		}
		note := fmt.Sprintf("[The user attached the file %q; it is saved at %s (%d bytes).]", m.Document.FileName, path, len(data))
		if in.Text == "" {
			in.Text = note
		} else {
			in.Text += "\n\n" + note
		}
		return in, nil
	}
	return in, errors.New("unsupported message")
}
