package chat

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/state"
)

// ButtonKind is the action a callback button performs: the first byte of
// its callback data. Each is registered once, by the engine or a module
// (Registry.Button, Registry.StoredButton); these are the engine's.
type ButtonKind byte

const (
	btnApprove ButtonKind = 'a'
	btnDeny    ButtonKind = 'd'
	btnAlways  ButtonKind = 'A'
	btnOption  ButtonKind = 'o'
	btnToggle  ButtonKind = 't' // ticks a multi-select option
	btnDone    ButtonKind = 'D' // finishes a multi-select question
	btnCancel  ButtonKind = 'c'
	// btnContinue resumes a turn a restart stopped at an approval; its
	// token is the approval's, valid across restarts (drain.go).
	btnContinue ButtonKind = 'r'
	// btnKeepWaiting answers the stall question of a turn (stall.go); its
	// token is the turn's cancel token.
	btnKeepWaiting ButtonKind = 'w'
	btnPick        ButtonKind = 'p' // a choice menu's button (menus.go)
)

// turnOver answers a press on a turn's button after the turn ended.
const turnOver = "This turn is already over."

// registerEngineButtons registers the buttons of approvals, questions,
// turns, menus and ▶️ Continue.
func (b *Engine) registerEngineButtons(r *Registry) {
	approve := func(c *Chat, p Press) {
		if a, ok := c.approvals[p.Token]; ok {
			c.decide(a, p)
		}
	}
	question := func(c *Chat, p Press) {
		if a, ok := c.approvals[p.Token]; ok {
			c.onQuestionPress(a, p)
		}
	}
	r.Button(btnApprove, Button{Ack: "Approved", Press: approve})
	r.Button(btnDeny, Button{Ack: "Denied", Press: approve})
	r.Button(btnAlways, Button{Ack: "Always allowed", Press: approve})
	r.Button(btnOption, Button{Ack: "Answered", Arg: true, Press: question})
	r.Button(btnToggle, Button{Arg: true, Press: question}) // the message itself shows the tick
	r.Button(btnDone, Button{Ack: "Answered", Arg: true, Press: question})
	r.Button(btnCancel, Button{Ack: "Cancelling…", Stale: turnOver, Press: func(c *Chat, p Press) {
		if c.turn != nil && c.turn.cancelToken == p.Token && !c.turn.done {
			c.cancelTurn()
		}
	}})
	r.Button(btnKeepWaiting, Button{Ack: "Waiting on", Stale: turnOver, Press: func(c *Chat, p Press) { c.keepWaiting(p) }})
	r.Button(btnPick, Button{Arg: true, Press: func(c *Chat, p Press) { c.onPick(p) }})
	r.StoredButton(btnContinue, StoredButton{NoAck: true, WaitFirst: true,
		Wait: "untether is restarting; press ▶️ Continue again once it is back.", Resolve: b.resolveContinue, // drain.go
		Sample: b.sampleContinue})
}

// sampleContinue makes an approval a restart interrupted, whose ▶️
// Continue works (StoredButton.Sample).
func (b *Engine) sampleContinue(ctx context.Context, key state.ChatKey) (string, error) {
	tok, now := NewToken(), time.Now()
	a := state.Approval{Token: tok, Key: key, RequestID: "req-" + tok, Tool: "Bash", Summary: "true",
		InputJSON: []byte(`{"command":"true"}`), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := b.store.PutApproval(ctx, a); err != nil {
		return "", err
	}
	if err := b.store.DecideApproval(ctx, tok, state.DecisionInterrupted, 0, now, "untether restarted"); err != nil {
		return "", err
	}
	return tok, nil
}

// buttonRef is what a callback token stands for.
type buttonRef struct {
	key state.ChatKey
}

// PressRoute is where a press goes: the chat (or forum topic) its button
// belongs to, and what the press does there.
type PressRoute struct {
	Key     state.ChatKey
	deliver func(updateID int64) bool
}

// Deliver hands the press, of update updateID, to its chat and reports
// whether it did (the chat then finishes the update).
func (r PressRoute) Deliver(updateID int64) bool { return r.deliver(updateID) }

// ResolvePress finds what a button press stands for, or says why the
// button does not work (refusal, to show as an alert): its callback data
// names a registered kind of button and a token that is live. Whether the
// press came from the chat the button belongs to is the caller's check
// (PressKey against Key).
func (b *Engine) ResolvePress(ctx context.Context, cq *models.CallbackQuery) (PressRoute, string) {
	kind, token, arg, ok := b.reg.parseCallback(cq.Data)
	if !ok {
		return PressRoute{}, "This button is not recognised."
	}
	return b.resolvePress(ctx, kind, token, arg, cq)
}

// ExpiredText answers a press whose button nothing serves; a press from
// a chat the button does not belong to gets it too, so it learns nothing.
const ExpiredText = "This button has expired."

// resolvePress finds what a press's token stands for, or says why the
// button no longer works. Buttons whose tokens the engine's table knows go
// to the chat that registered them; the others are looked up by the
// feature that made them (Registry.StoredButton).
func (b *Engine) resolvePress(ctx context.Context, kind ButtonKind, token string, arg int, cq *models.CallbackQuery) (PressRoute, string) {
	if sb, ok := b.reg.stored[kind]; ok {
		if sb.WaitFirst && b.draining.Load() {
			return PressRoute{}, sb.Wait
		}
		key, run, refusal := sb.Resolve(ctx, cq, token)
		if refusal != "" {
			return PressRoute{}, refusal
		}
		return PressRoute{Key: key, deliver: func(updateID int64) bool {
			c := b.chat(key, key.Chat < 0)
			if c == nil {
				b.answerCallback(cq.ID, sb.Wait, true)
				return false
			}
			if !sb.NoAck {
				b.answerCallback(cq.ID, sb.Ack, false)
			}
			c.post(item{updateID: updateID, fn: func() { run(c) }})
			return true
		}}, ""
	}
	btn := b.reg.buttons[kind]
	b.mu.Lock()
	ref, known := b.buttons[token]
	c := b.chats[ref.key]
	b.mu.Unlock()
	if !known || c == nil {
		return PressRoute{}, b.staleButtonText(ctx, btn, token, cq)
	}
	return PressRoute{Key: ref.key, deliver: func(updateID int64) bool {
		b.answerCallback(cq.ID, btn.Ack, false)
		c.post(item{updateID: updateID, press: &Press{Kind: kind, Token: token, Arg: arg, From: cq.From, Message: pressedMessage(cq)}})
		return true
	}}, ""
}

// PressKey is the chat (and forum topic) a press came from: that of the
// message carrying the button. A message Telegram no longer shows the bot
// does not say its topic, so a press on one is not trusted.
func PressKey(cq *models.CallbackQuery) (state.ChatKey, bool) {
	if m := cq.Message.Message; m != nil && m.Chat.ID != 0 {
		return ChatKeyOf(m), true
	}
	return state.ChatKey{}, false
}

// staleButtonText answers a press whose token the engine no longer knows:
// the button's own text, that an approval was decided, or that it expired.
func (b *Engine) staleButtonText(ctx context.Context, btn Button, token string, cq *models.CallbackQuery) string {
	if btn.Stale != "" {
		return btn.Stale
	}
	if a, err := b.store.GetApproval(ctx, token); err == nil && a.Decision != state.DecisionPending {
		if a.Decision == state.DecisionInterrupted && a.Note != "continued" {
			return "A restart stopped this request before anyone decided. Press ▶️ Continue on its message to let Claude ask again."
		}
		return "This request is no longer waiting (" + string(a.Decision) + ")."
	}
	if fromBeforeStart(cq, b.born) {
		// Menus (/mode, /model, /project, /branch, /sessions) live in
		// memory: say why the press does nothing, and what to do.
		return restartedText
	}
	return ExpiredText
}

// restartedText answers a press on buttons shown before untether restarted.
const restartedText = "untether restarted since these buttons were shown, so they no longer work. Send the command again for new ones."

// fromBeforeStart reports whether the pressed message was sent before born
// (Telegram dates messages in whole seconds).
func fromBeforeStart(cq *models.CallbackQuery, born time.Time) bool {
	if cq == nil || cq.Message.Message == nil || cq.Message.Message.Date == 0 {
		return false
	}
	return int64(cq.Message.Message.Date) < born.Unix()
}

// answerCallback answers a callback query off the update worker. A late
// answer ("query is too old") is harmless and only logged.
func (b *Engine) answerCallback(id, text string, alert bool) {
	b.goTracked(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(b.runCtx), 10*time.Second)
		defer cancel()
		if _, err := b.bot.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: id, Text: text, ShowAlert: alert}); err != nil {
			b.log.Warn().Err(RedactErr(err, b.Config())).Msg("answer callback query")
		}
	})
}

// NewToken returns a short random callback token: 8 bytes, 11 characters,
// so "x:<token>:<n>" stays far below Telegram's 64-byte limit and presses
// cannot be forged by guessing.
func NewToken() string {
	var buf [8]byte
	_, _ = rand.Read(buf[:])
	return base64.RawURLEncoding.EncodeToString(buf[:])
}

func (b *Engine) registerButton(token string, key state.ChatKey) {
	b.mu.Lock()
	b.buttons[token] = buttonRef{key: key}
	b.mu.Unlock()
}

func (b *Engine) forgetButton(token string) {
	b.mu.Lock()
	delete(b.buttons, token)
	b.mu.Unlock()
}

// CallbackData is a button's callback data: "k:token".
func CallbackData(kind ButtonKind, token string) string { return string(kind) + ":" + token }

// CallbackArg is the callback data of a button that carries a number
// (Button.Arg): "k:token:n".
func CallbackArg(kind ButtonKind, token string, n int) string {
	return string(kind) + ":" + token + ":" + strconv.Itoa(n)
}

// parseCallback reads callback data of a registered kind of button.
func (r *Registry) parseCallback(data string) (ButtonKind, string, int, bool) {
	parts := strings.Split(data, ":")
	if len(parts) < 2 || len(parts[0]) != 1 || parts[1] == "" {
		return 0, "", 0, false
	}
	kind := ButtonKind(parts[0][0])
	_, token := r.buttons[kind]
	_, stored := r.stored[kind]
	if !token && !stored {
		return 0, "", 0, false
	}
	if !r.withArg(kind) {
		return kind, parts[1], 0, len(parts) == 2
	}
	if len(parts) != 3 {
		return 0, "", 0, false
	}
	n, err := strconv.Atoi(parts[2])
	return kind, parts[1], n, err == nil && n >= 0
}
