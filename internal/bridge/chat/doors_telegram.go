package chat

import (
	"time"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/runner"
)

// Doors: what the chat is sent, its menus, buttons and approvals.

// Reply sends an HTML notice to the chat at high priority, as a reply to
// message replyTo (0: none).
func (c *Chat) Reply(html string, replyTo int) *outbox.Message { return c.reply(html, replyTo) }

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

// SendMessage sends content to the chat through the outbox.
func (c *Chat) SendMessage(prio outbox.Priority, content outbox.Content, opts outbox.SendOptions) *outbox.Message {
	return c.b.out.Send(c.ctx(), c.outKey, prio, content, opts)
}

// SendMedia sends files to the chat through the outbox.
func (c *Chat) SendMedia(prio outbox.Priority, media outbox.Media, opts outbox.SendOptions) *outbox.Message {
	return c.b.out.SendMedia(c.ctx(), c.outKey, prio, media, opts)
}

// EditMessage edits a message the chat was sent. The outcome is for a
// caller that must know it (a NoReplace message found gone); waiting for
// it belongs off the actor (Offload).
func (c *Chat) EditMessage(m *outbox.Message, prio outbox.Priority, content outbox.Content) *outbox.Pending {
	return c.b.out.Edit(c.ctx(), m, prio, content)
}

// Message is the chat's message id as an outbox message, to edit it (one
// sent before a restart, whose id the state database kept).
func (c *Chat) Message(id int) *outbox.Message { return c.b.out.Adopt(c.outKey, outbox.MessageID(id)) }

// Data is what the menu's kind keeps with it (the project a branch menu
// lists the worktrees of).
func (m *Menu) Data() string { return m.data }

// SetData keeps data with the menu.
func (m *Menu) SetData(data string) { m.data = data }

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

// RegisterButton makes token a live button of this chat in the engine's
// button table: a press on it from this chat reaches the chat's actor (a
// Button's Press); from anywhere else it is refused.
func (c *Chat) RegisterButton(token string) { c.b.registerButton(token, c.key) }

// ForgetButton retires a token RegisterButton made live.
func (c *Chat) ForgetButton(token string) { c.b.forgetButton(token) }
