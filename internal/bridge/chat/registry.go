package chat

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// A Module is one feature of the bridge (settings, places, budgets,
// schedules, files, phone). It registers its commands, buttons, menus and
// hooks with the Registry once, before the bridge runs; the engine calls
// them in the order they were registered, which is behaviour (bridge's modules.go
// lists the modules in that order). A module that runs in the background
// (a scheduler, a pruner) also implements Starter.
type Module interface {
	Register(r *Registry)
}

// Starter is a Module with background work: Start runs once the bridge is
// connected and its chats can be reached, until ctx ends at shutdown. It
// returns once its work has stopped.
type Starter interface {
	Start(ctx context.Context)
}

// Command is a bot command a module answers.
type Command struct {
	Name string // without the slash, lower-case
	Help string // its line in /help and setMyCommands ("" keeps it out)
	// WhileDraining: the command is answered while untether restarts
	// (other messages are kept for after the restart).
	WhileDraining bool
	Run           func(c *Chat, in Invocation)
}

// Invocation is one use of a command: its arguments and the message.
type Invocation struct {
	Args string
	Msg  *models.Message
}

// Press is a button press handed to the chat that owns the button.
type Press struct {
	Kind  ButtonKind
	Token string
	Arg   int
	From  models.User
	// Message is the id of the message the button is on, 0 if Telegram
	// did not say. It is known even while the outbox still waits for the
	// answer to the call that sent that message.
	Message int
}

// pressedMessage is the id of the message a press came from, 0 if unknown.
func pressedMessage(cq *models.CallbackQuery) int {
	switch {
	case cq.Message.Message != nil:
		return cq.Message.Message.ID
	case cq.Message.InaccessibleMessage != nil:
		return cq.Message.InaccessibleMessage.MessageID
	}
	return 0
}

// Button is a kind of callback button whose token the engine's button table
// knows (registerButton): a press is answered with Ack, checked against the
// chat that registered the token, and handed to Press on that chat's actor.
// Arg buttons carry a number after the token ("k:token:n").
type Button struct {
	Ack   string
	Arg   bool
	Stale string // the answer when the token is unknown ("" for "This button has expired.")
	Press func(c *Chat, p Press)
}

// StoredButton is a kind of callback button whose token lives in the state
// store, so it works across restarts (▶️ Continue, ⏰ Retry, 🗑 Delete,
// 🔁 Retry a transcription). Resolve runs on the update worker: it finds
// the chat the token belongs to, or says why the press is refused
// (refusal, shown as an alert); the engine then checks the press came from
// that chat, answers it with Ack (unless the run answers it itself) and
// posts run to the chat's actor.
type StoredButton struct {
	Ack   string
	NoAck bool // run answers the callback itself
	// Wait answers a press that comes while untether restarts.
	Wait string
	// WaitFirst: during a restart, the press is refused before the token
	// is even looked up.
	WaitFirst bool
	Resolve   func(ctx context.Context, cq *models.CallbackQuery, token string) (key state.ChatKey, run func(c *Chat), refusal string)
	// Sample makes a live token of this kind that belongs to key, the way
	// the feature does (a row in the store, a file kept), for the test
	// that presses every kind of button from every place (OwnButton).
	Sample func(ctx context.Context, key state.ChatKey) (token string, err error)
}

// MenuKind is a kind of choice menu (chat.showMenu): Pick applies a press
// on one of its choices, respond edits the menu message into the outcome.
type MenuKind struct {
	Columns int
	Pick    func(c *Chat, m *Menu, choice string, respond func(html string))
}

// Inbound is a message on its way through the message hooks. Quote, once
// a hook sets it, is what the message replies to, as Claude is told it;
// Quoted is the message with that quote in front of its text.
type Inbound struct {
	Msg    *models.Message
	Quote  string
	Quoted *models.Message
}

// TurnEnd is a turn that ended, answered or with its process gone: what
// the turn's CLI left on this machine is in Workdir ("" on another host).
type TurnEnd struct {
	ReplyTo int
	Workdir string
	// Links are the resources the turn's MCP tools returned by reference.
	Links []runner.ResourceLink
}

// Registry is where modules register. It is filled before Run and read
// only afterwards, so reads need no lock.
type Registry struct {
	commands  []Command
	byName    map[string]int
	buttons   map[ButtonKind]Button
	stored    map[ButtonKind]StoredButton
	menus     map[string]MenuKind
	onMessage []func(c *Chat, in *Inbound) bool
	onEdit    func(c *Chat, m *models.Message)
	onEvent   []func(c *Chat, ev runner.Event)
	onSpawn   []func(c *Chat, rc *runner.Config, pl Place)
	onSend    []func(c *Chat, o *Outgoing) bool
	intercept []func(c *Chat, tc runner.TurnCompleted, replyTo int) bool
	notes     []func(c *Chat, tc runner.TurnCompleted) []string
	headings  []func(c *Chat, tc runner.TurnCompleted) string
	onAnswer  []func(c *Chat, tc runner.TurnCompleted, a *Answer)
	onTurnEnd []func(c *Chat, e TurnEnd)
	onRequest []func(c *Chat, req *runner.ApprovalRequested)
	onApprove []func(c *Chat, a *Approval, b *render.ApprovalButtons)
	onStatus  []func(c *Chat, info *render.StatusInfo)
	onFlush   []func(c *Chat)
	onReplay  []func(entries []outbox.JournalEntry)
	onStopped []func(c *Chat, w StoppedWork)
	slots     int        // how many slots modules asked for (slot.go)
	queue     *chatQueue // the chats' queue of waiting work, once a module asked (waitqueue.go)
	// What the metrics watch (below): approvals' ends, and what the
	// outbox tells of Telegram.
	onApprovalEnd []func(c *Chat, a *Approval, d state.Decision)
	onDelivered   []func(d outbox.Dispatch)
	onRateLimited []func(key outbox.ChatKey, retryAfter time.Duration)
	onChanged     []func(c *Chat)                   // settings_hooks.go
	onCancel      []func(c *Chat, replyTo int) bool // settings_hooks.go
}

func newRegistry() *Registry {
	return &Registry{byName: map[string]int{}, buttons: map[ButtonKind]Button{}, stored: map[ButtonKind]StoredButton{}, menus: map[string]MenuKind{}}
}

// Command registers a command; the order of registration is /help's.
func (r *Registry) Command(c Command) {
	if _, dup := r.byName[c.Name]; dup {
		panic(fmt.Sprintf("bridge: command /%s registered twice", c.Name))
	}
	r.byName[c.Name] = len(r.commands)
	r.commands = append(r.commands, c)
}

// Button registers a kind of button whose tokens the engine's table keeps.
func (r *Registry) Button(kind ButtonKind, b Button) {
	r.claimKind(kind)
	r.buttons[kind] = b
}

// StoredButton registers a kind of button whose tokens the store keeps.
func (r *Registry) StoredButton(kind ButtonKind, b StoredButton) {
	r.claimKind(kind)
	r.stored[kind] = b
}

func (r *Registry) claimKind(kind ButtonKind) {
	_, a := r.buttons[kind]
	_, b := r.stored[kind]
	if a || b || kind == ':' || kind == 0 {
		panic(fmt.Sprintf("bridge: button kind %q registered twice", kind))
	}
}

// Menu registers a kind of choice menu.
func (r *Registry) Menu(kind string, m MenuKind) {
	if _, dup := r.menus[kind]; dup {
		panic("bridge: menu kind " + kind + " registered twice")
	}
	if m.Columns == 0 {
		m.Columns = menuColumns
	}
	r.menus[kind] = m
}

// OnMessage adds a hook for messages that are not commands nor answers to
// an open question; the first that returns true consumes the message.
func (r *Registry) OnMessage(h func(c *Chat, in *Inbound) bool) { r.onMessage = append(r.onMessage, h) }

// OnEdit sets the handler of edited messages (one module owns them).
func (r *Registry) OnEdit(h func(c *Chat, m *models.Message)) {
	if r.onEdit != nil {
		panic("bridge: two handlers of edited messages")
	}
	r.onEdit = h
}

// OnEvent adds a hook that sees every runner event after the engine.
func (r *Registry) OnEvent(h func(c *Chat, ev runner.Event)) { r.onEvent = append(r.onEvent, h) }

// OnSpawn adds a hook that adjusts how the chat's next CLI starts.
func (r *Registry) OnSpawn(h func(c *Chat, rc *runner.Config, pl Place)) {
	r.onSpawn = append(r.onSpawn, h)
}

// OnSend adds a gate every message to Claude passes; a gate that refuses
// returns false and has told the user why.
func (r *Registry) OnSend(h func(c *Chat, o *Outgoing) bool) { r.onSend = append(r.onSend, h) }

// InterceptAnswer adds a hook on every finished turn, before its inputs
// are forgotten: a hook that answers the turn itself (a prompt a limit
// rejected) returns true, and no other answer is sent.
func (r *Registry) InterceptAnswer(h func(c *Chat, tc runner.TurnCompleted, replyTo int) bool) {
	r.intercept = append(r.intercept, h)
}

// AnswerNotes adds a hook whose lines go above an answer's footer, after
// the turn's own notes.
func (r *Registry) AnswerNotes(h func(c *Chat, tc runner.TurnCompleted) []string) {
	r.notes = append(r.notes, h)
}

// AnswerHeading adds a hook that may head a turn's answer (the first
// non-empty heading wins): why a turn nobody typed came.
func (r *Registry) AnswerHeading(h func(c *Chat, tc runner.TurnCompleted) string) {
	r.headings = append(r.headings, h)
}

// Answer is a turn's answer as it is about to be sent: its footer and
// notices (Meta) and the buttons under its last message (Keyboard).
type Answer struct {
	Meta     *render.FinalMeta
	Keyboard render.Keyboard
}

// OnAnswer adds a hook that may fill in a turn's answer before it is sent
// (what the footer shows, buttons under it); hooks run after the engine's
// own fields and the heading are set, in registration order.
func (r *Registry) OnAnswer(h func(c *Chat, tc runner.TurnCompleted, a *Answer)) {
	r.onAnswer = append(r.onAnswer, h)
}

// OnTurnEnd adds a hook run after a turn ended, answered or not.
func (r *Registry) OnTurnEnd(h func(c *Chat, e TurnEnd)) { r.onTurnEnd = append(r.onTurnEnd, h) }

// OnApprovalRequest adds a hook that sees an approval request before it
// is recorded and shown (it may narrow the permission suggestions).
func (r *Registry) OnApprovalRequest(h func(c *Chat, req *runner.ApprovalRequested)) {
	r.onRequest = append(r.onRequest, h)
}

// OnApproval adds a hook that may add buttons to a tool's approval message.
func (r *Registry) OnApproval(h func(c *Chat, a *Approval, b *render.ApprovalButtons)) {
	r.onApprove = append(r.onApprove, h)
}

// OnStatus adds a hook that fills its part of /status.
func (r *Registry) OnStatus(h func(c *Chat, info *render.StatusInfo)) {
	r.onStatus = append(r.onStatus, h)
}

// OnFlush adds a hook that sends what a module collects for the chat (an
// album) before other work for the chat goes ahead (a scheduled run).
func (r *Registry) OnFlush(h func(c *Chat)) { r.onFlush = append(r.onFlush, h) }

// OnJournalReplay adds a hook that sees the journaled sends a restart
// replays, before they are sent.
func (r *Registry) OnJournalReplay(h func(entries []outbox.JournalEntry)) {
	r.onReplay = append(r.onReplay, h)
}

// OnApprovalEnd adds a hook that sees every approval end, however it ends:
// decided (allow, deny, always, answer), expired, withdrawn by the CLI, or
// interrupted by a restart; a.Created() says how long it waited.
func (r *Registry) OnApprovalEnd(h func(c *Chat, a *Approval, d state.Decision)) {
	r.onApprovalEnd = append(r.onApprovalEnd, h)
}

// OnDelivered adds a hook that sees each send, edit or delete Telegram
// accepted, as the outbox describes it (outbox.Options.Delivered): from
// an outbox goroutine, so it must be fast and touch no chat.
func (r *Registry) OnDelivered(h func(d outbox.Dispatch)) { r.onDelivered = append(r.onDelivered, h) }

// OnRateLimited adds a hook that sees each 429 Telegram answered a chat's
// call with, and its retry_after (outbox.Options.RateLimited): it may run
// under the outbox's locks, so it must be fast and call nothing.
func (r *Registry) OnRateLimited(h func(key outbox.ChatKey, retryAfter time.Duration)) {
	r.onRateLimited = append(r.onRateLimited, h)
}

// flushPending runs the flush hooks: what modules collect for the chat
// goes now.
func (c *Chat) flushPending() {
	for _, h := range c.b.reg.onFlush {
		h(c)
	}
}

// help lists the commands for /help and setMyCommands.
func (r *Registry) help() []render.CommandHelp {
	out := make([]render.CommandHelp, 0, len(r.commands))
	for _, c := range r.commands {
		if c.Help != "" {
			out = append(out, render.CommandHelp{Command: c.Name, Description: c.Help})
		}
	}
	return out
}

// command finds a registered command.
func (r *Registry) command(name string) (Command, bool) {
	i, ok := r.byName[name]
	if !ok {
		return Command{}, false
	}
	return r.commands[i], true
}

// kinds lists every kind of button registered.
func (r *Registry) kinds() []ButtonKind {
	out := make([]ButtonKind, 0, len(r.buttons)+len(r.stored))
	for k := range r.buttons {
		out = append(out, k)
	}
	for k := range r.stored {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// withArg reports whether kind's callback data carries a number.
func (r *Registry) withArg(kind ButtonKind) bool { return r.buttons[kind].Arg }

// whileDraining reports whether a command is answered during a drain.
func (r *Registry) whileDraining(name string) bool {
	c, ok := r.command(name)
	return ok && c.WhileDraining
}

// StoppedWork is what a CLI that had to close (a restart, /new, a switch, a
// crash) still waited for between turns: its background tasks and its
// wake-ups ended with the process.
type StoppedWork struct {
	Why     string // what closed it, in the user's words: "untether restarted", "/new", …
	Session string // the session the process ran
	Place   Place  // where it ran
	Work    runner.Background
}

// OnWorkStopped adds a hook told what a closed CLI's work was, after the
// engine said its background tasks stopped (background_work.go).
func (r *Registry) OnWorkStopped(h func(c *Chat, w StoppedWork)) {
	r.onStopped = append(r.onStopped, h)
}

// OnSettingsChanged adds a hook told that what the chat's settings are may
// have changed: its record was saved (a /mode, /model, /effort, /project,
// /branch, a session resumed, a mode the CLI switched to), or the config
// was reloaded. It runs on the actor, right after the save and inside
// whatever made it: a hook that reads the settings posts its work (Post),
// so that the change is complete when it runs.
func (r *Registry) OnSettingsChanged(h func(c *Chat)) { r.onChanged = append(r.onChanged, h) }

// OnCancel adds a hook /cancel asks first: one that stops something of its
// own (a login waiting for its code) says so, returns true, and /cancel
// does nothing else.
func (r *Registry) OnCancel(h func(c *Chat, replyTo int) bool) { r.onCancel = append(r.onCancel, h) }
