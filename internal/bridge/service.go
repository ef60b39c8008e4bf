package bridge

import (
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/ingress"
	"github.com/untether/untether/internal/bridge/modules/triggers"
	"github.com/untether/untether/internal/service/webhook"
)

// What the bridge gives the service (internal/service) and its metrics:
// the webhooks' Firer and Seen store, the triggers module; every Bot API
// call, counted by the update loop's transport; when getUpdates last
// succeeded; and how late each update arrived.

// served keeps the modules the bridge serves from outside the engine.
type served struct {
	triggers *triggers.Module
}

// keep notes the triggers module and returns it, for modules.go.
func (s *served) keep(t *triggers.Module) *triggers.Module {
	s.triggers = t
	return t
}

// Webhooks is what the webhook handler needs of the bridge: a Firer that
// runs a trigger's prompt in its chat, and the deliveries seen, kept in
// the state database.
type Webhooks interface {
	webhook.Firer
	webhook.Seen
}

// Webhooks returns the triggers module, the webhook handler's Firer and
// Seen store. Runs it takes before Run starts wait in the state database
// and go once the chats can be reached.
func (b *Bridge) Webhooks() Webhooks { return b.served.triggers }

// observe makes the loop count every Bot API call into the metrics, and
// lets the engine's metrics read when getUpdates last succeeded.
func (b *Bridge) observe(opts *Options) {
	if opts.Metrics != nil {
		b.loop.SetObserver(opts.Metrics)
	}
	opts.Polled = b.loop.LastPollSuccess
}

// noteLag observes how late a message (or an edit) reached the bridge:
// from its date, as Telegram stamps it (whole seconds), to the moment the
// getUpdates response that brought it was read.
func (b *Bridge) noteLag(u *models.Update, note ingress.Note) {
	m := b.e.Options().Metrics
	at := note.Received()
	if m == nil || at.IsZero() {
		return
	}
	var date int
	switch {
	case u.Message != nil:
		date = u.Message.Date
	case u.EditedMessage != nil:
		date = u.EditedMessage.EditDate
	}
	if date > 0 {
		m.UpdateLag(at.Sub(time.Unix(int64(date), 0)))
	}
}
