package bridge

import (
	"bytes"
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

	"github.com/untether/untether/internal/bridge/outbox"
)

// maxUpdatesBody bounds a getUpdates response. Telegram returns at most 100
// updates; this leaves room for large ones and stops a hostile or broken
// server from exhausting memory.
const maxUpdatesBody = 32 << 20

// pollGuard wraps Telegram's HTTP transport. For getUpdates it runs every
// successful response through guardUpdates before go-telegram/bot decodes
// it, and tells pollProgress what each poll achieved; the first decoded
// poll makes the daemon ready. Other methods pass through untouched.
//
// Why a transport shim rather than our own getUpdates loop: the library's
// loop, its error classification (ErrorConflict, ErrorUnauthorized) and its
// offset handling stay as they are; the shim only ensures the one step that
// fails, decoding, cannot fail on the content of an update.
type pollGuard struct {
	next http.RoundTripper
	b    *Bridge
}

func (g pollGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	var sent outbox.CallMark // a long poll sent before an outage proves nothing about it
	if g.b.out != nil && strings.HasSuffix(req.URL.Path, "/getUpdates") {
		sent = g.b.out.CallStarted()
	}
	resp, err := g.next.RoundTrip(req)
	if !strings.HasSuffix(req.URL.Path, "/getUpdates") {
		return resp, err
	}
	p := &g.b.progress
	if err != nil || resp.StatusCode != http.StatusOK {
		p.attemptFailed(time.Now()) // Telegram's side; the library reports and retries
		return resp, err
	}
	if g.b.out != nil {
		g.b.out.Reachable(sent) // Telegram answers: queued answers stop backing off
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxUpdatesBody+1))
	_ = resp.Body.Close()
	if err != nil {
		p.attemptFailed(time.Now())
		return nil, fmt.Errorf("read getUpdates response: %w", err)
	}
	var batch guardedBatch
	if len(body) > maxUpdatesBody {
		err = fmt.Errorf("%w: larger than %d bytes", errUndecodableBatch, maxUpdatesBody)
	} else {
		batch, err = guardUpdates(body)
	}
	if len(batch.unreadable) > 0 {
		g.b.log.Error().Int("count", len(batch.unreadable)).Strs("excerpts", batch.unreadable).
			Msg("dropping getUpdates entries without a readable update_id")
	}
	if err != nil {
		// The library logs the error through pollError and retries after a
		// back-off; progress is not counted, so a server that keeps sending
		// this ends up in STATUS= and stops the watchdog.
		p.unreadable(time.Now(), err)
		return nil, err
	}
	if batch.passed {
		p.attemptFailed(time.Now())
	} else {
		g.b.notes.add(batch.notes)
		p.polled(time.Now(), batch.count, batch.maxID)
		g.b.ready.Do(func() {
			if g.b.opts.Ready != nil {
				g.b.opts.Ready()
			}
		})
	}
	resp.Body = io.NopCloser(bytes.NewReader(batch.body))
	resp.ContentLength = int64(len(batch.body))
	resp.Header.Del("Content-Length")
	return resp, nil
}

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
		b.log.Warn().Err(redactErr(err, cfg)).Msg("first getUpdates failed; the long poll retries")
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
	note := b.notes.take(u.ID)
	err := b.handleUpdate(ctx, u, note)
	b.progress.handledUpdate(time.Now(), u.ID, note.skipErr != nil, err)
}

// logUnrouted gives an update that carries nothing the bridge routes its
// one log line.
func (b *Bridge) logUnrouted(u *models.Update, note updateNote) {
	kind := note.kind
	if kind == "" {
		kind = "unknown"
	}
	switch {
	case note.skipErr != nil:
		b.log.Error().Int64("update_id", u.ID).Str("kind", kind).Str("error", note.skipErr.Error()).
			Msg("skipping an update untether cannot read")
	case note.repairs != nil:
		b.log.Error().Int64("update_id", u.ID).Str("kind", kind).Interface("repairs", note.repairs).
			Msg("skipping an update whose content could not be read")
	default:
		b.log.Info().Int64("update_id", u.ID).Str("kind", kind).Msg("skipping an update of a kind untether does not handle")
	}
}

// logRepaired reports an update that is routed without the parts the
// client library could not decode. From a stranger it is only a debug line:
// strangers must not be able to fill the log.
func (b *Bridge) logRepaired(u *models.Update, note updateNote) {
	if note.repairs == nil {
		return
	}
	var from int64
	switch {
	case u.Message != nil && u.Message.From != nil:
		from = u.Message.From.ID
	case u.CallbackQuery != nil:
		from = u.CallbackQuery.From.ID
	}
	ev := b.log.Debug()
	if from != 0 && b.allowedUser(from) {
		ev = b.log.Warn()
	}
	ev.Int64("update_id", u.ID).Str("kind", note.kind).Interface("repairs", note.repairs).
		Msg("handling an update without the parts the Telegram client library could not decode")
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
	if err := b.progress.check(now, b.staleAfter()); err != nil {
		return err
	}
	return b.chatsHealthy(now)
}

// chatsHealthy reports a chat whose mailbox has not moved for two minutes:
// its actor is wedged. A chat waiting for a live slot or a human keeps
// handling its mailbox, so it never shows here.
func (b *Bridge) chatsHealthy(now time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for key, c := range b.chats {
		if since := c.stalledSince(); !since.IsZero() && now.Sub(since) > 2*time.Minute {
			return fmt.Errorf("chat %s has not handled its mailbox since %s", key, since.Format(time.RFC3339))
		}
	}
	return nil
}

// PollTrouble describes a problem of the update loop for STATUS=: getUpdates
// responses that cannot be read, updates that fail to route, or a loop
// without progress. It is "" while polling works.
func (b *Bridge) PollTrouble(now time.Time) string {
	return b.progress.trouble(now, b.staleAfter())
}

// pollError sees every getUpdates failure (the library retries by itself).
func (b *Bridge) pollError(err error) {
	cfg := b.Config()
	err = redactErr(err, cfg)
	switch {
	case errors.Is(err, bot.ErrorConflict):
		b.onConflict(err, time.Now()) // conflict.go
	case errors.Is(err, bot.ErrorUnauthorized):
		b.sendFatal(fmt.Errorf("%w: the bot token was revoked: %v", ErrFatalTelegram, err))
	case errors.Is(err, context.Canceled):
	case errors.Is(err, errUndecodableBatch):
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
