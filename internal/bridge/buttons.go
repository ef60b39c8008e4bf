package bridge

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

// buttonRef is what a callback token stands for.
type buttonRef struct {
	key state.ChatKey
}

// routeCallback answers the press at once (the client shows a spinner
// until then), then hands the work to the chat.
func (b *Bridge) routeCallback(ctx context.Context, updateID int64, cq *models.CallbackQuery) bool {
	if !b.allowedUser(cq.From.ID) || !b.allowedChat(callbackChat(cq)) {
		b.answerCallback(cq.ID, "You are not allowed to use this bot.", true)
		b.log.Warn().Int64("user_id", cq.From.ID).Msg("ignoring a button press from a user not allowed")
		return false
	}
	kind, token, arg, ok := parseCallbackData(cq.Data)
	if !ok {
		b.answerCallback(cq.ID, "This button is not recognised.", true)
		return false
	}
	if kind == btnContinue {
		return b.routeContinue(ctx, updateID, cq, token)
	}
	if kind == btnRetryLimit || kind == btnDropRetry || kind == btnDeleteSchedule {
		return b.routeAway(ctx, updateID, cq, kind, token) // away.go
	}
	if kind == btnRetryVoice {
		return b.routeVoiceRetry(ctx, updateID, cq, token) // voice.go
	}
	b.mu.Lock()
	ref, known := b.buttons[token]
	c := b.chats[ref.key]
	b.mu.Unlock()
	if !known || c == nil {
		b.answerCallback(cq.ID, b.staleButtonText(ctx, kind, token), true)
		return false
	}
	b.answerCallback(cq.ID, pressAck(kind), false)
	c.post(item{updateID: updateID, press: &press{kind: kind, token: token, arg: arg, from: cq.From}})
	return true
}

func (b *Bridge) staleButtonText(ctx context.Context, kind buttonKind, token string) string {
	if kind == btnCancel || kind == btnKeepWaiting {
		return "This turn is already over."
	}
	if a, err := b.store.GetApproval(ctx, token); err == nil && a.Decision != state.DecisionPending {
		return "This request is no longer waiting (" + string(a.Decision) + ")."
	}
	return "This button has expired."
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
	if kind == btnOption || kind == btnPick || kind == btnToggle || kind == btnDone {
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
	switch kind {
	case btnApprove, btnDeny, btnAlways, btnCancel, btnContinue, btnKeepWaiting, btnRetryLimit, btnDropRetry, btnDeleteSchedule,
		btnFullDiff, btnSendEdited, btnRetryVoice: // the last three: phone.go
		return kind, parts[1], 0, len(parts) == 2
	case btnOption, btnPick, btnToggle, btnDone:
		if len(parts) != 3 {
			return 0, "", 0, false
		}
		n, err := strconv.Atoi(parts[2])
		return kind, parts[1], n, err == nil && n >= 0
	}
	return 0, "", 0, false
}
