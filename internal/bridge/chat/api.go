package chat

import (
	"context"
	"fmt"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner"
)

// The doors of a chat that modules use. Every method runs on the chat's
// actor (inside a hook, a command, a press, or work posted back with
// Post), unless its comment says otherwise.

// Key is the chat (and forum topic) this actor serves.
func (c *Chat) Key() state.ChatKey { return c.key }

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

// Config is the live configuration.
func (c *Chat) Config() *config.Config { return c.b.Config() }

// Ctx is the chat's context: its logger names the chat (and the session,
// once there is one), a state write it makes names the chat at risk, and
// it is not cancelled by shutdown, so what it starts can finish cleanly.
func (c *Chat) Ctx() context.Context { return c.ctx() }

// Log is the chat's logger.
func (c *Chat) Log() *zerolog.Logger { return c.logger() }

// Record is what the state database keeps of the chat: its choices
// (project, branch, mode, model), its session and its totals.
func (c *Chat) Record() state.Chat { return c.record() }

// SaveRecord changes the chat's record with change and stores it.
func (c *Chat) SaveRecord(change func(rec *state.Chat)) {
	c.record()
	change(&c.rec)
	c.saveRecord()
}

// Session is the chat's live CLI session, nil if it has none.
func (c *Chat) Session() *runner.Session { return c.sess }

// Project is the project the chat works in under cfg: its choice while
// the config has it and lets it in, else the default.
func (c *Chat) Project(cfg *config.Config) config.ProjectSettings { return c.projectFor(cfg) }

// ChatWord is "topic" in a forum topic, else "chat".
func (c *Chat) ChatWord() string { return c.chatWord() }

// Reply sends an HTML notice to the chat at high priority, as a reply to
// message replyTo (0: none).
func (c *Chat) Reply(html string, replyTo int) *outbox.Message { return c.reply(html, replyTo) }

// ReplyTarget is the message the running turn answers, 0 without one.
func (c *Chat) ReplyTarget() int { return c.replyTarget() }

// Busy reports whether a turn, an approval or a message on its way to
// Claude is open.
func (c *Chat) Busy() bool { return c.busy() }

// Post runs fn on the chat's actor, after what is queued. It never
// blocks; any goroutine may call it.
func (c *Chat) Post(fn func()) { c.post(item{fn: fn}) }

// Offload runs work off the actor, as work Shutdown waits for, with the
// chat's context; what work returns, if not nil, then runs on the actor.
// It is for what would hold the actor up: a control request to the CLI, a
// download, a git command.
func (c *Chat) Offload(work func(ctx context.Context) (back func())) {
	ctx := c.ctx()
	c.b.goTracked(func() {
		if back := work(ctx); back != nil {
			c.post(item{fn: back})
		}
	})
}

// ShowMenu sends html with one button per choice (current, if among
// them, marked); a press on one runs the Pick of the menu kind registered
// as kind. A chat keeps one menu of each kind.
func (c *Chat) ShowMenu(kind, html string, choices []string, current string, replyTo int) {
	c.showMenu(kind, html, choices, current, replyTo)
}

// ShowMenuLabeled is ShowMenu with button texts apart from the choices
// they stand for (labels[i] for choices[i]).
func (c *Chat) ShowMenuLabeled(kind, html string, choices, labels []string, current string, replyTo int) *Menu {
	return c.showMenuLabeled(kind, html, choices, labels, current, replyTo)
}

// SessionPlace is where the live CLI runs (a config reload does not move
// it); where the chat will work next is Place.
func (c *Chat) SessionPlace() Place { return c.sessPlace }

// SessionIdle reports whether the chat has a live CLI with nothing to do:
// idle, no message on its way to it, none it has not answered.
func (c *Chat) SessionIdle() bool {
	return c.sess != nil && c.sess.State() == runner.StateIdle && c.sends.inFlight == nil && len(c.sends.queue) == 0 && len(c.inputs) == 0
}

// NoteSpendingCap tells the engine what the live CLI may still spend
// under its --max-budget-usd (capped false: no cap), so a turn its
// process dies in is charged within it (turn_costs.go).
func (c *Chat) NoteSpendingCap(capped bool, left float64) {
	if c.book != nil {
		c.book.setCap(capped, left)
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

// ResetSession forgets the chat's session where it works, as /new does:
// the next message starts a fresh one.
func (c *Chat) ResetSession() { c.resetSession() }

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

// SendMessage sends content to the chat through the outbox.
func (c *Chat) SendMessage(prio outbox.Priority, content outbox.Content, opts outbox.SendOptions) *outbox.Message {
	return c.b.out.Send(c.ctx(), c.outKey, prio, content, opts)
}

// SendMedia sends files to the chat through the outbox.
func (c *Chat) SendMedia(prio outbox.Priority, media outbox.Media, opts outbox.SendOptions) *outbox.Message {
	return c.b.out.SendMedia(c.ctx(), c.outKey, prio, media, opts)
}

// EditMessage edits a message the chat was sent.
func (c *Chat) EditMessage(m *outbox.Message, prio outbox.Priority, content outbox.Content) {
	c.b.out.Edit(c.ctx(), m, prio, content)
}

// Message is the chat's message id as an outbox message, to edit it (one
// sent before a restart, whose id the state database kept).
func (c *Chat) Message(id int) *outbox.Message { return c.b.out.Adopt(c.outKey, outbox.MessageID(id)) }

// Place is the project the chat works in under cfg and where in it
// (branch), as its users chose or the config's default.
func (c *Chat) Place(cfg *config.Config) (config.ProjectSettings, Place) { return c.placeFor(cfg) }

// MayUse reports whether the chat may work in project p (its
// allowed_chat_ids).
func (c *Chat) MayUse(p config.ProjectSettings) bool { return c.mayUse(p) }

// NotOpen says that the chat may not use p, naming the config key.
func (c *Chat) NotOpen(p config.ProjectSettings) string { return c.notOpen(p) }

// SwitchPlace moves the chat to pl, keeping the session it had there; a
// busy chat is refused through respond. It reports whether it moved.
func (c *Chat) SwitchPlace(pl Place, respond func(html string)) bool {
	return c.switchPlace(pl, respond)
}

// Group reports whether the chat is a group or a forum topic, where
// everyone in it reads what is sent.
func (c *Chat) Group() bool { return c.group }

// ProjectNames lists the projects open to the chat, in the config's order.
func (c *Chat) ProjectNames(cfg *config.Config) []string { return c.projectNames(cfg) }

// NotOpenText refuses a project the chat may not use.
func (c *Chat) NotOpenText(p config.ProjectSettings) string { return c.notOpenText(p) }

// ArrivedText says where the chat works now (p, pl) and what its next
// message does there.
func (c *Chat) ArrivedText(p config.ProjectSettings, pl Place) string { return c.arrivedText(p, pl) }

// RefuseBusy tells a chat whose turn runs (or waits for an approval or a
// slot) through respond that it must end first, and reports whether it did.
func (c *Chat) RefuseBusy(respond func(html string)) bool { return c.refuseBusy(respond) }

// ResumeSession makes the chat resume session id, in the project and
// branch it ran in, and reports whether it does (respond says why not).
func (c *Chat) ResumeSession(id string, respond func(html string)) bool {
	return c.resumeSession(id, respond)
}

// ContinueSession makes the chat's next message continue session id at
// pl, the chat's place: a session the chat had (ours) or one started
// outside untether, whose first prompt was then someone else's.
func (c *Chat) ContinueSession(pl Place, id string, ours bool) error {
	if id == c.record().SessionID {
		return nil
	}
	c.dropSession("/continue")
	c.continueNext = false
	if err := c.b.store.NoteSession(c.ctx(), c.key, pl.Project, pl.Branch, id); err != nil {
		return fmt.Errorf("continue session %s: %w", id, err)
	}
	c.rec.SessionID = id
	c.saveRecord()
	if !ours {
		c.adoptID = id // its first prompt was someone else's (noteSession)
	}
	return nil
}

// ContinueLatestNext makes the chat's next message continue the most
// recent conversation in its directory by the CLI's own --continue (a
// project on another host, whose transcripts untether cannot read).
func (c *Chat) ContinueLatestNext() {
	// Killed, not closed: a CLI that exits normally appends to its
	// transcript, which would make its own session the directory's latest,
	// the one --continue takes.
	c.detachSession("/continue", true)
	c.continueNext = true
	c.rec.SessionID = ""
	c.saveRecord()
}

// Data is what the menu's kind keeps with it (the project a branch menu
// lists the worktrees of).
func (m *Menu) Data() string { return m.data }

// SetData keeps data with the menu.
func (m *Menu) SetData(data string) { m.data = data }

// SessionDir is the directory the live CLI runs in on this machine: ""
// without one, or for a project on another host.
func (c *Chat) SessionDir() string { return c.sessDir }

// UploadDir is where the chat's files go: the live CLI's directory, else
// its place's; "" for a project on another host.
func (c *Chat) UploadDir(cfg *config.Config) string { return c.uploadDir(cfg) }

// Approval is the chat's pending approval with this token.
func (c *Chat) Approval(token string) (*Approval, bool) {
	a, ok := c.approvals[token]
	return a, ok
}

// Token is the approval's callback token.
func (a *Approval) Token() string { return a.token }

// Request is what the CLI asked.
func (a *Approval) Request() runner.ApprovalRequested { return a.req }

// Created is when the approval was asked.
func (a *Approval) Created() time.Time { return a.created }

// Message is the approval's message in the chat.
func (a *Approval) Message() *outbox.Message { return a.msg }

// Typing shows the chat that the bot is working on something.
func (c *Chat) Typing() { c.b.out.Typing(c.ctx(), c.outKey) }

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

// RegisterButton makes token a live button of this chat in the engine's
// button table: a press on it from this chat reaches the chat's actor (a
// Button's Press); from anywhere else it is refused.
func (c *Chat) RegisterButton(token string) { c.b.registerButton(token, c.key) }

// ForgetButton retires a token RegisterButton made live.
func (c *Chat) ForgetButton(token string) { c.b.forgetButton(token) }
