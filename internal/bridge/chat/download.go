package chat

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	"github.com/untether/untether/internal/bridge/owndir"
)

// download opens a file a user sent. The limit is checked against the size
// getFile reports; the caller still bounds what it reads.
func (b *Engine) download(ctx context.Context, fileID string, limitMB int) (io.ReadCloser, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	f, err := b.bot.GetFile(ctx, &bot.GetFileParams{FileID: fileID})
	if err != nil {
		cancel()
		if strings.Contains(err.Error(), "file is too big") {
			return nil, fmt.Errorf("%w: Telegram lets a bot download at most 20 MB", owndir.ErrTooBig)
		}
		return nil, fmt.Errorf("get file: %w", RedactErr(err, b.Config()))
	}
	if f.FileSize > int64(limitMB)<<20 {
		cancel()
		return nil, owndir.TooBig(limitMB)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.bot.FileDownloadLink(f), nil)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("download file: %w", RedactErr(err, b.Config()))
	}
	resp, err := b.client.Do(req)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("download file: %w", RedactErr(err, b.Config()))
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("download file: HTTP %d", resp.StatusCode)
	}
	return cancelOnClose{resp.Body, cancel}, nil
}

// cancelOnClose ends the download's context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
