package chat

import (
	"context"

	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/runner"
)

// Doors: what goes to Claude, and the turn it makes.

// TurnRunning reports whether a turn is running.
func (c *Chat) TurnRunning() bool { return c.turn != nil && !c.turn.done }

// AddTurnNote adds a line to the running turn's notes, shown in its
// progress message and above its answer's footer; without a running turn
// it does nothing.
func (c *Chat) AddTurnNote(note string) {
	if c.TurnRunning() {
		c.turn.notes = append(c.turn.notes, note)
	}
}

// MsgID is the Telegram message the outgoing message came from (0: none).
func (o *Outgoing) MsgID() int { return o.msgID }

// RestartFirst makes the hand-over restart the CLI, off the actor, before
// it writes the message (a spending cap that no longer fits).
func (o *Outgoing) RestartFirst(restart func(ctx context.Context, sess *runner.Session)) {
	o.restart = restart
}

// FlushPending sends what modules collect for the chat (an album, forwards)
// now, before other work for the chat goes ahead (a scheduled run).
func (c *Chat) FlushPending() { c.flushPending() }

// Send queues text for Claude from user from, answering Telegram message
// msgID (0: none); budgets, modes and approvals apply as to any message.
func (c *Chat) Send(in runner.UserInput, msgID int, from state.UserID) { c.send(in, msgID, from) }

// SendOutgoing queues a message a module made (NewOutgoing) for Claude.
func (c *Chat) SendOutgoing(o *Outgoing) { c.sendOutgoing(o) }

// NewOutgoing is a message for Claude from user from (0: nobody, as for a
// [[schedules]] entry), answering Telegram message msgID (0: none).
func NewOutgoing(in runner.UserInput, msgID int, from state.UserID) *Outgoing {
	return &Outgoing{input: in, msgID: msgID, label: LabelOf(in), from: from}
}

// OnSettled makes fn run once the message has reached the CLI or the user
// has been told why not (never when a drain left it for the next start).
func (o *Outgoing) OnSettled(fn func()) *Outgoing {
	o.settled = fn
	return o
}

// WithNote adds note to the notes of the turn the message starts, shown in
// its progress and above its answer's footer.
func (o *Outgoing) WithNote(note string) *Outgoing {
	o.note = note
	return o
}

// TurnPrompt is the prompt a finished turn answered, as untether wrote it
// to the CLI, and who it was from; ok is false when the turn's prompt is
// not one untether wrote (or is forgotten).
func (c *Chat) TurnPrompt(tc runner.TurnCompleted) (in runner.UserInput, from state.UserID, ok bool) {
	for _, u := range append(append([]runner.MessageUUID(nil), tc.Messages...), c.started) {
		if o := c.inputs[u]; o != nil {
			return o.input, o.from, true
		}
	}
	return runner.UserInput{}, 0, false
}

// WithUpdate makes the message carry Telegram update id, confirmed once
// the message reached the CLI or the user was told why not (TakeUpdate).
func (o *Outgoing) WithUpdate(id int64) *Outgoing {
	o.updateID = id
	return o
}

// WithLabel names the message in notices ("an album of 3").
func (o *Outgoing) WithLabel(label string) *Outgoing {
	o.label = label
	return o
}

// PrepareWith makes the hand-over build the message's input with prepare,
// off the actor, in the order the messages came (a download, a
// transcription). An error that is a UserText() error is shown as it is.
func (o *Outgoing) PrepareWith(prepare func(ctx context.Context) (runner.UserInput, error)) *Outgoing {
	o.prepare = prepare
	return o
}

// OnFailed lets failed answer a failed hand-over itself (reporting true);
// otherwise the user is told the error.
func (o *Outgoing) OnFailed(failed func(err error) bool) *Outgoing {
	o.failed = failed
	return o
}

// TakeUpdate hands the update of the message being handled to the caller,
// who confirms it later (FinishUpdates, or an Outgoing's WithUpdate): a
// message kept in a collection must be replayed after a crash.
func (c *Chat) TakeUpdate() int64 { return c.takeUpdate() }

// Hold is for a send gate that keeps o back from Claude for now and will
// send it on later (SendOutgoing): the update that brought o stays
// unconfirmed, and o unsettled, until o reaches the CLI or the user is
// told why not, so a restart meanwhile hands the message in again rather
// than losing it.
func (c *Chat) Hold(o *Outgoing) {
	o.held = true
	if o.updateID == 0 {
		o.updateID = c.takeUpdate()
	}
}

// FinishUpdates confirms updates a module took.
func (c *Chat) FinishUpdates(ids []int64) {
	for _, id := range ids {
		if id != 0 {
			c.b.finishUpdate(id)
		}
	}
}

// HandleMessage handles m as if it had just come (an edited message the
// user chose to send).
func (c *Chat) HandleMessage(m *models.Message) { c.onMessage(m) }
