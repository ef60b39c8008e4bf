package webhook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/service/hookprompt"
)

// Run is a delivery that passed every check: what Fire starts.
type Run struct {
	// Trigger is the [[triggers]] entry: its chat, topic, project, name.
	Trigger config.Trigger
	// Prompt is the rendered prompt, never empty.
	Prompt string
	// Truncated says Prompt was cut at the handler's MaxPrompt (the cut
	// is also noted at its end).
	Truncated bool
	// Delivery and Event are X-GitHub-Delivery and X-GitHub-Event, "" when
	// the sender did not set them.
	Delivery, Event string
}

// Firer starts a trigger's run in its chat. Fire should return quickly:
// take the run (queued behind the chat's work, kept across a restart) and
// let it run on its own.
type Firer interface {
	Fire(ctx context.Context, r Run) error
}

// ErrUnavailable is what Fire returns (wrapped) when the chat cannot take
// a run now, e.g. the daemon is draining: 503 with Retry-After, and the
// delivery is not remembered, so the sender's retry runs. An error that
// also has a RetryAfter() time.Duration method sets Retry-After.
var ErrUnavailable = errors.New("cannot take a run now")

// DefaultRetryAfter is Retry-After for ErrUnavailable when the error does
// not say: about what a restart takes.
const DefaultRetryAfter = 60 * time.Second

// Observer counts deliveries (metrics.Metrics is one).
type Observer interface {
	WebhookDelivery(trigger, result string)
}

// The result of a delivery: Observer's result label and the log's reason.
const (
	ResultAccepted     = "accepted"      // 202, fired
	ResultPing         = "ping"          // 200, GitHub's ping, nothing run
	ResultReplay       = "replay"        // 200, already accepted, not run again
	ResultUnknown      = "unknown"       // 404, no such trigger
	ResultTooLarge     = "too_large"     // 413
	ResultBadSignature = "bad_signature" // 401, missing or wrong signature
	ResultBadBody      = "bad_body"      // 400, not a JSON body
	ResultEmptyPrompt  = "empty_prompt"  // 422, the prompt rendered empty
	ResultUnavailable  = "unavailable"   // 503, Fire: ErrUnavailable
	ResultFailed       = "failed"        // 500, Fire or the Seen store failed
)

// UnknownTrigger is the trigger label of deliveries to a name that is no
// trigger (a configured name cannot start with '_').
const UnknownTrigger = "_unknown"

// Defaults of Options.
const (
	DefaultMaxBody   = 1 << 20
	DefaultMaxPrompt = 32 << 10
	// fireTimeout bounds Fire: it only has to take the run.
	fireTimeout = 10 * time.Second
)

// Options configure a Handler.
type Options struct {
	Fire Firer
	// Seen remembers accepted deliveries; nil is a MemorySeen with the
	// default window and bound.
	Seen Seen
	Log  zerolog.Logger
	// Observe counts deliveries; nil for none.
	Observe Observer
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// MaxBody and MaxPrompt are the body and rendered prompt caps; zero
	// means DefaultMaxBody and DefaultMaxPrompt.
	MaxBody   int64
	MaxPrompt int
}

// Handler serves POST /hooks/{name}.
type Handler struct {
	opt      Options
	triggers atomic.Pointer[map[string]*trigger]
	limiter  logLimiter
}

// trigger is a [[triggers]] entry with its prompt parsed.
type trigger struct {
	cfg    config.Trigger
	prompt *hookprompt.Template
}

// New returns a handler with no triggers: every name is unknown until
// SetTriggers.
func New(o Options) *Handler {
	if o.Seen == nil {
		o.Seen = NewMemorySeen(DefaultReplayWindow, DefaultSeenEntries)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.MaxPrompt <= 0 {
		o.MaxPrompt = DefaultMaxPrompt
	}
	h := &Handler{opt: o}
	h.triggers.Store(&map[string]*trigger{})
	return h
}

// SetTriggers replaces the triggers (at start, and on a reload); requests
// already being handled finish with the old ones. ts must have passed
// config validation; a prompt that does not parse is an error and nothing
// is replaced.
func (h *Handler) SetTriggers(ts []config.Trigger) error {
	m := make(map[string]*trigger, len(ts))
	for _, t := range ts {
		p, err := hookprompt.Parse(t.Name, t.Prompt)
		if err != nil {
			return fmt.Errorf("trigger %s: %w", t.Name, err)
		}
		m[t.Name] = &trigger{cfg: t, prompt: p}
	}
	h.triggers.Store(&m)
	return nil
}

// ServeHTTP implements http.Handler. The route must give the trigger's
// name as the path value "name".
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	t, ok := (*h.triggers.Load())[name]
	if !ok {
		h.refuse(w, r, UnknownTrigger, ResultUnknown, http.StatusNotFound, "no such trigger")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opt.MaxBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		h.refuse(w, r, name, ResultTooLarge, http.StatusRequestEntityTooLarge, "body larger than "+strconv.FormatInt(h.opt.MaxBody, 10)+" bytes")
		return
	case err != nil:
		h.refuse(w, r, name, ResultBadBody, http.StatusBadRequest, "could not read the body")
		return
	}
	if reason := verify(t.cfg.Secret.Reveal(), body, r.Header.Get(SignatureHeader)); reason != "" {
		h.refuse(w, r, name, ResultBadSignature, http.StatusUnauthorized, reason)
		return
	}
	event := headerValue(r, EventHeader)
	if event == "ping" {
		h.answer(w, name, ResultPing, http.StatusOK, "pong: the signature is right; a ping runs nothing")
		return
	}
	data, err := decodeBody(r.Header.Get("Content-Type"), body)
	if err != nil {
		h.refuse(w, r, name, ResultBadBody, http.StatusBadRequest, err.Error())
		return
	}
	delivery := headerValue(r, DeliveryHeader)
	keys := seenKeys(name, delivery, body)
	fresh, err := h.claim(r.Context(), keys)
	switch {
	case errors.Is(err, ErrUnavailable): // the store cannot take it now (a full disk): the sender tries again
		w.Header().Set("Retry-After", strconv.Itoa(int(retryAfter(err).Seconds())))
		h.refuse(w, r, name, ResultUnavailable, http.StatusServiceUnavailable, "cannot take it now: "+err.Error())
		return
	case err != nil:
		h.fail(w, r, name, fmt.Errorf("remember the delivery: %w", err))
		return
	case !fresh:
		h.answer(w, name, ResultReplay, http.StatusOK, "already received; not run again")
		return
	}
	result, code, msg, err := h.fire(r.Context(), t, data, delivery, event)
	if code != http.StatusAccepted {
		h.release(keys)
	}
	switch {
	case err != nil && code == http.StatusInternalServerError:
		h.fail(w, r, name, err)
	case code == http.StatusAccepted:
		h.opt.Log.Info().Str("trigger", name).Str("event", event).Str("delivery", delivery).Msg("webhook accepted")
		h.answer(w, name, result, code, msg)
	case code == http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", strconv.Itoa(int(retryAfter(err).Seconds())))
		h.refuse(w, r, name, result, code, msg)
	default:
		h.refuse(w, r, name, result, code, msg)
	}
}

// fire renders the prompt and hands the run to Fire.
func (h *Handler) fire(ctx context.Context, t *trigger, data hookprompt.Data, delivery, event string) (result string, code int, msg string, err error) {
	prompt, truncated, err := t.prompt.Render(data, h.opt.MaxPrompt)
	if err != nil {
		return ResultFailed, http.StatusInternalServerError, "", fmt.Errorf("render the prompt: %w", err)
	}
	if strings.TrimSpace(prompt) == "" {
		return ResultEmptyPrompt, http.StatusUnprocessableEntity, "the prompt rendered empty for this body; nothing runs", nil
	}
	if truncated {
		prompt += fmt.Sprintf("\n\n[untether: the rest of this prompt was cut: it was longer than %d bytes]", h.opt.MaxPrompt)
	}
	ctx, cancel := context.WithTimeout(ctx, fireTimeout)
	defer cancel()
	err = h.opt.Fire.Fire(ctx, Run{Trigger: t.cfg, Prompt: prompt, Truncated: truncated, Delivery: delivery, Event: event})
	switch {
	case err == nil:
		return ResultAccepted, http.StatusAccepted, "accepted: the prompt runs in the trigger's chat", nil
	case errors.Is(err, ErrUnavailable):
		return ResultUnavailable, http.StatusServiceUnavailable, "cannot run it now: " + err.Error(), err
	}
	return ResultFailed, http.StatusInternalServerError, "", fmt.Errorf("start the run: %w", err)
}

// claim claims every key; a key already seen makes the delivery a replay,
// and the keys this call claimed are released again.
func (h *Handler) claim(ctx context.Context, keys []string) (fresh bool, err error) {
	now := h.opt.Now()
	var claimed []string
	for _, k := range keys {
		ok, err := h.opt.Seen.Claim(ctx, k, now)
		if err != nil || !ok {
			h.release(claimed)
			return false, err
		}
		claimed = append(claimed, k)
	}
	return true, nil
}

func (h *Handler) release(keys []string) {
	for _, k := range keys {
		// Not the request's context: a client that hung up must not leave
		// its delivery marked seen.
		if err := h.opt.Seen.Release(context.Background(), k); err != nil {
			h.opt.Log.Error().Err(err).Msg("webhook: could not forget a delivery that did not run; a retry of it will be taken for a replay")
		}
	}
}

// seenKeys are the replay keys of a delivery: its body's hash and, when
// the sender gave one, its delivery id, both per trigger.
func seenKeys(name, delivery string, body []byte) []string {
	sum := sha256.Sum256(body)
	keys := []string{"body:" + name + ":" + hex.EncodeToString(sum[:])}
	if delivery != "" {
		if len(delivery) > 128 { // a GUID is 36; keep a hostile header small
			d := sha256.Sum256([]byte(delivery))
			delivery = "sha256:" + hex.EncodeToString(d[:])
		}
		keys = append(keys, "delivery:"+name+":"+delivery)
	}
	return keys
}

func retryAfter(err error) time.Duration {
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) && ra.RetryAfter() > 0 {
		return max(ra.RetryAfter().Round(time.Second), time.Second)
	}
	return DefaultRetryAfter
}

// headerValue is a header's value if it is short printable ASCII, else
// "": these end up in logs and keys.
func headerValue(r *http.Request, name string) string {
	v := r.Header.Get(name)
	if len(v) > 256 || strings.IndexFunc(v, func(c rune) bool { return c < 0x20 || c > 0x7e }) >= 0 {
		return ""
	}
	return v
}
