package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/ingress"
)

// probeUpdates makes one short getUpdates call before the long poll starts:
// on an idle bot the first long poll only returns after poll_timeout, and
// readiness (sd_notify READY=1) should not wait that long. It confirms
// nothing new (its offset is the persisted one) and takes at most one
// update, which the long poll then receives again. Its outcome reaches
// pollGuard like any poll; a failure just leaves readiness to the first
// long poll.
func (b *Bridge) probeUpdates(ctx context.Context, offset int64) {
	cfg := b.Config()
	form := url.Values{"offset": {strconv.FormatInt(offset+1, 10)}, "timeout": {"0"}, "limit": {"1"}}
	u := strings.TrimRight(cfg.Telegram.APIURL, "/") + "/bot" + cfg.Telegram.BotToken.Reveal() + "/getUpdates"
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := b.client.Do(req)
	if err != nil {
		b.log.Warn().Err(chat.RedactErr(err, cfg)).Msg("first getUpdates failed; the long poll retries")
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var env struct {
			Description string `json:"description"`
		}
		_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&env)
		// The description may echo the request URL, and so the token.
		desc := strings.ReplaceAll(env.Description, cfg.Telegram.BotToken.Reveal(), "[redacted]")
		b.log.Warn().Int("status", resp.StatusCode).Str("description", desc).Msg("first getUpdates failed; the long poll retries")
	}
}

// onUpdate is the library's handler: it handles one polled update and
// counts it for liveness.
func (b *Bridge) onUpdate(ctx context.Context, _ *bot.Bot, u *models.Update) {
	if u == nil {
		return
	}
	note := b.loop.Take(u.ID)
	b.noteLag(u, note) // service.go
	err := b.handleUpdate(ctx, u, note)
	b.loop.Handled(time.Now(), u.ID, note, err)
}

// staleAfter is how long the update loop may go without progress before
// Healthy fails: two long polls and some slack.
func (b *Bridge) staleAfter() time.Duration {
	return 2*b.Config().Telegram.PollTimeout.Std() + 30*time.Second
}

// Healthy reports whether the daemon makes progress: a getUpdates poll
// completed recently with every update it returned routed or deliberately
// skipped (a failed attempt counts while nothing is pending: the library
// retries on its own), and no chat has left an item in its mailbox for
// long. The systemd watchdog is fed only while it holds, so a wedged
// daemon is restarted.
func (b *Bridge) Healthy(now time.Time) error {
	if err := b.loop.Check(now, b.staleAfter()); err != nil {
		return err
	}
	return b.e.ChatsHealthy(now)
}

// PollTrouble describes a problem of the update loop for STATUS=: getUpdates
// responses that cannot be read, updates that fail to route, or a loop
// without progress. It is "" while polling works.
func (b *Bridge) PollTrouble(now time.Time) string {
	return b.loop.Trouble(now, b.staleAfter())
}

// pollError sees every getUpdates failure (the library retries by itself).
func (b *Bridge) pollError(err error) {
	cfg := b.Config()
	err = chat.RedactErr(err, cfg)
	switch {
	case errors.Is(err, bot.ErrorConflict):
		b.onConflict(err, time.Now()) // conflict.go
	case errors.Is(err, bot.ErrorUnauthorized):
		b.sendFatal(fmt.Errorf("%w: the bot token was revoked: %v", ErrFatalTelegram, err))
	case errors.Is(err, context.Canceled):
	case errors.Is(err, ingress.ErrUndecodableBatch):
		b.log.Error().Err(err).Msg("getUpdates returned nothing untether can read; retrying")
	default:
		b.log.Warn().Err(err).Msg("getUpdates failed; retrying")
	}
}

func (b *Bridge) sendFatal(err error) {
	select {
	case b.fatal <- err:
	default:
	}
}
