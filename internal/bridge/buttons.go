package bridge

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/state"
)

// buttonKind is the action a callback button performs.
type buttonKind byte

const (
	btnApprove buttonKind = 'a'
	btnDeny    buttonKind = 'd'
	btnAlways  buttonKind = 'A'
	btnOption  buttonKind = 'o'
	btnToggle  buttonKind = 't' // ticks a multi-select option
	btnDone    buttonKind = 'D' // finishes a multi-select question
	btnCancel  buttonKind = 'c'
	// btnContinue resumes a turn a restart stopped at an approval; its
	// token is the approval's, valid across restarts (drain.go).
	btnContinue buttonKind = 'r'
	// btnKeepWaiting answers the stall question of a turn (stall.go); its
	// token is the turn's cancel token.
	btnKeepWaiting buttonKind = 'w'
	btnPick        buttonKind = 'p' // a choice menu's button (menus.go)
	// Retries after a subscription limit and schedules (away.go): their
	// tokens are state-store keys, valid across restarts.
	btnRetryLimit     buttonKind = 'L' // ⏰ Retry at the reset
	btnDropRetry      buttonKind = 'Z' // ✖️ Drop the retry
	btnDeleteSchedule buttonKind = 's' // 🗑 Delete a schedule; the token is its id
)

// buttonKinds is every kind a callback may carry: parseCallbackData
// accepts these and no other, and the press path checks each of them the
// same way.
var buttonKinds = []buttonKind{btnApprove, btnDeny, btnAlways, btnOption, btnToggle, btnDone, btnCancel, btnContinue,
	btnKeepWaiting, btnPick, btnRetryLimit, btnDropRetry, btnDeleteSchedule, btnFullDiff, btnSendEdited, btnRetryVoice}

// withArg reports the kinds whose callback data carries an index.
func (k buttonKind) withArg() bool {
	return k == btnOption || k == btnPick || k == btnToggle || k == btnDone
}

// buttonRef is what a callback token stands for.
type buttonRef struct {
	key state.ChatKey
}

// pressRoute is where a press goes: the chat (or forum topic) its button
// belongs to, and what the press does there. deliver reports whether the
// update was handed to the chat (which then finishes it).
type pressRoute struct {
	key     state.ChatKey
	deliver func(updateID int64) bool
}

// expiredText answers a press whose button nothing serves; a press from
// a chat the button does not belong to gets it too, so it learns nothing.
const expiredText = "This button has expired."

// routeCallback checks the press, then hands its work to the chat. Every
// kind of button goes through the same checks, in this order: the user
// and the chat are allowed, the token names something, and the chat (and
// forum topic) the press came from is the one it belongs to. Telegram
// takes the callback data from the client, which can send any, so a token
// copied from another chat must not act there.
func (b *Bridge) routeCallback(ctx context.Context, updateID int64, cq *models.CallbackQuery) bool {
	if !b.allowedUser(cq.From.ID) || !b.allowedChat(callbackChat(cq)) {
		return b.refuseStrangerPress(updateID, cq)
	}
	kind, token, arg, ok := parseCallbackData(cq.Data)
	if !ok {
		b.answerCallback(cq.ID, "This button is not recognised.", true)
		return false
	}
	rt, refusal := b.resolvePress(ctx, kind, token, arg, cq)
	if refusal != "" {
		b.answerCallback(cq.ID, refusal, true)
		return false
	}
	if from, ok := pressKey(cq); !ok || from != rt.key {
		b.ignored.log(b, "foreign-press", callbackChat(cq), cq.From.ID,
			"refusing a button press from a chat or topic the button does not belong to (a copied or forged callback)")
		b.answerCallback(cq.ID, expiredText, true)
		return false
	}
	return rt.deliver(updateID)
}

// resolvePress finds what a press's token stands for, or says why the
// button no longer works.
func (b *Bridge) resolvePress(ctx context.Context, kind buttonKind, token string, arg int, cq *models.CallbackQuery) (pressRoute, string) {
	switch kind {
	case btnContinue:
		return b.continueRoute(ctx, cq, token) // drain.go
	case btnRetryLimit, btnDropRetry, btnDeleteSchedule:
		return b.awayRoute(ctx, cq, kind, token) // away.go
	case btnRetryVoice:
		return b.voiceRetryRoute(cq, token) // voice.go
	}
	b.mu.Lock()
	ref, known := b.buttons[token]
	c := b.chats[ref.key]
	b.mu.Unlock()
	if !known || c == nil {
		return pressRoute{}, b.staleButtonText(ctx, kind, token)
	}
	return pressRoute{key: ref.key, deliver: func(updateID int64) bool {
		b.answerCallback(cq.ID, pressAck(kind), false)
		c.post(item{updateID: updateID, press: &press{kind: kind, token: token, arg: arg, from: cq.From}})
		return true
	}}, ""
}

// pressKey is the chat (and forum topic) a press came from: that of the
// message carrying the button. A message Telegram no longer shows the bot
// does not say its topic, so a press on one is not trusted.
func pressKey(cq *models.CallbackQuery) (state.ChatKey, bool) {
	if m := cq.Message.Message; m != nil && m.Chat.ID != 0 {
		return chatKeyOf(m), true
	}
	return state.ChatKey{}, false
}

// refuseStrangerPress drops a press from a user (or in a chat) the bot
// does not serve, like their messages: no database write, the log
// rate-limited per chat, and the "not allowed" answer at most once a
// minute per user, so a stream of presses costs neither log lines nor
// Bot API calls.
func (b *Bridge) refuseStrangerPress(updateID int64, cq *models.CallbackQuery) bool {
	chat := callbackChat(cq)
	if !b.allowedUser(cq.From.ID) {
		b.ignored.log(b, "stranger-press", chat, cq.From.ID, "ignoring a button press from a user not allowed")
	} else {
		b.ignored.log(b, "group-press", chat, cq.From.ID, "ignoring a button press in a group not listed in telegram.allowed_chat_ids")
	}
	if b.ignored.due("stranger-press-answer", cq.From.ID) {
		b.answerCallback(cq.ID, "You are not allowed to use this bot.", true)
	}
	return b.dropQuietly(updateID)
}

func (b *Bridge) staleButtonText(ctx context.Context, kind buttonKind, token string) string {
	if kind == btnCancel || kind == btnKeepWaiting {
		return "This turn is already over."
	}
	if a, err := b.store.GetApproval(ctx, token); err == nil && a.Decision != state.DecisionPending {
		return "This request is no longer waiting (" + string(a.Decision) + ")."
	}
	return expiredText
}

func pressAck(kind buttonKind) string {
	switch kind {
	case btnApprove:
		return "Approved"
	case btnDeny:
		return "Denied"
	case btnAlways:
		return "Always allowed"
	case btnOption, btnDone:
		return "Answered"
	case btnToggle:
		return "" // the message itself shows the tick
	case btnCancel:
		return "Cancelling…"
	case btnKeepWaiting:
		return "Waiting on"
	case btnRetryLimit:
		return "Will retry"
	case btnDropRetry:
		return "Dropped"
	case btnDeleteSchedule:
		return "Deleting…"
	case btnFullDiff:
		return "Sending the diff…"
	case btnSendEdited:
		return "Sending…"
	}
	return ""
}

// answerCallback answers a callback query off the update worker. A late
// answer ("query is too old") is harmless and only logged.
func (b *Bridge) answerCallback(id, text string, alert bool) {
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(b.runCtx), 10*time.Second)
		defer cancel()
		if _, err := b.bot.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: id, Text: text, ShowAlert: alert}); err != nil {
			b.log.Warn().Err(redactErr(err, b.Config())).Msg("answer callback query")
		}
	}()
}

// newToken returns a short random callback token: 8 bytes, 11 characters,
// so "x:<token>:<n>" stays far below Telegram's 64-byte limit and presses
// cannot be forged by guessing.
func newToken() string {
	var buf [8]byte
	_, _ = rand.Read(buf[:])
	return base64.RawURLEncoding.EncodeToString(buf[:])
}

func (b *Bridge) registerButton(token string, key state.ChatKey) {
	b.mu.Lock()
	b.buttons[token] = buttonRef{key: key}
	b.mu.Unlock()
}

func (b *Bridge) forgetButton(token string) {
	b.mu.Lock()
	delete(b.buttons, token)
	b.mu.Unlock()
}

func callbackData(kind buttonKind, token string, arg int) string {
	if kind.withArg() {
		return string(kind) + ":" + token + ":" + strconv.Itoa(arg)
	}
	return string(kind) + ":" + token
}

func parseCallbackData(data string) (buttonKind, string, int, bool) {
	parts := strings.Split(data, ":")
	if len(parts) < 2 || len(parts[0]) != 1 || parts[1] == "" {
		return 0, "", 0, false
	}
	kind := buttonKind(parts[0][0])
	if !slices.Contains(buttonKinds, kind) {
		return 0, "", 0, false
	}
	if !kind.withArg() {
		return kind, parts[1], 0, len(parts) == 2
	}
	if len(parts) != 3 {
		return 0, "", 0, false
	}
	n, err := strconv.Atoi(parts[2])
	return kind, parts[1], n, err == nil && n >= 0
}
