package chat

import (
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/render"
)

// Menu is a message with one button per choice, shown by /mode and /model
// without an argument. Its token is registered like an approval's, so a
// stranger's press is refused before it reaches the chat, and a press on a
// Menu the chat no longer knows answers "expired". A chat keeps one Menu of
// each kind: a newer one expires the older.
type Menu struct {
	token   string
	kind    string // a kind registered with Registry.Menu
	choices []string
	msg     *outbox.Message
	// data is what the menu's kind keeps with it (the project a branch
	// menu lists the worktrees of: a press after /project switched the
	// chat must not apply its choice to another project).
	data string
}

// menuColumns is how many choice buttons share a row.
const menuColumns = 2

// showMenu sends html with one button per choice; current, if among them,
// is marked. Callback data is "p:<token>:<index>", far below the 64 bytes
// Telegram allows whatever the choices are called.
func (c *Chat) showMenu(kind string, html string, choices []string, current string, replyTo int) {
	c.showMenuLabeled(kind, html, choices, choices, current, replyTo)
}

// showMenuLabeled is showMenu with button texts apart from the choices
// they stand for (labels[i] for choices[i]).
func (c *Chat) showMenuLabeled(kind string, html string, choices, labels []string, current string, replyTo int) *Menu {
	if c.menus == nil {
		c.menus = map[string]*Menu{}
	}
	for tok, old := range c.menus {
		if old.kind == kind {
			c.dropMenu(tok)
		}
	}
	m := &Menu{token: NewToken(), kind: kind, choices: choices}
	var kb render.Keyboard
	for i, choice := range choices {
		label := labels[i]
		if choice == current {
			label = "✅ " + label
		}
		if i%c.b.reg.menus[kind].Columns == 0 {
			kb.Rows = append(kb.Rows, nil)
		}
		row := &kb.Rows[len(kb.Rows)-1]
		*row = append(*row, render.Button{Text: label, CallbackData: CallbackArg(btnPick, m.token, i)})
	}
	c.menus[m.token] = m
	c.b.registerButton(m.token, c.key)
	m.msg = c.b.out.Send(c.ctx(), c.outKey, outbox.High, outbox.Content{Text: html, Keyboard: kb},
		outbox.SendOptions{ReplyTo: outbox.MessageID(replyTo)})
	return m
}

func (c *Chat) dropMenu(token string) {
	delete(c.menus, token)
	c.b.forgetButton(token)
}

// onPick applies a press on a menu button. The menu message becomes the
// answer (its buttons go), so the chat keeps one message per choice made.
func (c *Chat) onPick(p Press) {
	m, ok := c.menus[p.Token]
	if !ok || p.Arg < 0 || p.Arg >= len(m.choices) {
		return
	}
	c.dropMenu(p.Token)
	respond := func(html string) {
		c.b.out.Edit(c.ctx(), m.msg, outbox.High, outbox.Content{Text: html})
	}
	if kind, ok := c.b.reg.menus[m.kind]; ok {
		kind.Pick(c, m, m.choices[p.Arg], respond)
	}
}
