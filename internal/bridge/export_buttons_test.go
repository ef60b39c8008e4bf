package bridge

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/untether/untether/internal/bridge/state"
)

// ButtonKinds is every kind of button, as the first byte of its callback
// data: the list parseCallbackData accepts.
func ButtonKinds() []byte {
	kinds := (&Bridge{}).buildRegistry().kinds()
	out := make([]byte, len(kinds))
	for i, k := range kinds {
		out[i] = byte(k)
	}
	return out
}

// OwnButton makes a live button of kind that belongs to key, the way its
// feature would (a token in the button table for the buttons of a running
// chat, a row in the state store or a kept voice note for the ones that
// outlive a restart), and returns its callback data. A kind it does not
// know is an error, so a new kind of button cannot be left out of the
// tests that go over them all.
func (b *Bridge) OwnButton(kind byte, key state.ChatKey) (string, error) {
	ctx := context.Background()
	tok := newToken()
	now := time.Now()
	switch k := buttonKind(kind); k {
	case btnApprove, btnDeny, btnAlways, btnOption, btnToggle, btnDone, btnCancel, btnKeepWaiting, btnPick,
		btnFullDiff, btnSendEdited:
		if b.chat(key, key.Chat < 0) == nil {
			return "", fmt.Errorf("own a %q button: draining", kind)
		}
		b.registerButton(tok, key)
		if b.reg.withArg(k) {
			return callbackArg(k, tok, 0), nil
		}
		return callbackData(k, tok), nil
	case btnContinue:
		a := state.Approval{Token: tok, Key: key, RequestID: "req-" + tok, Tool: "Bash", Summary: "true",
			InputJSON: []byte(`{"command":"true"}`), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
		if err := b.store.PutApproval(ctx, a); err != nil {
			return "", err
		}
		if err := b.store.DecideApproval(ctx, tok, state.DecisionInterrupted, 0, now, "untether restarted"); err != nil {
			return "", err
		}
		return callbackData(k, tok), nil
	case btnRetryLimit, btnDropRetry:
		r := state.Retry{Token: tok, Key: key, Input: []byte(`{"Text":"retried prompt"}`), Label: "retried prompt",
			ResetsAt: now.Add(time.Hour), State: state.RetryAsked, CreatedAt: now}
		if err := b.store.PutRetry(ctx, r); err != nil {
			return "", err
		}
		return callbackData(k, tok), nil
	case btnDeleteSchedule:
		id, err := b.store.AddSchedule(ctx, state.Schedule{Key: key, Prompt: "scheduled prompt", NextRun: now.Add(time.Hour), CreatedAt: now}, 100)
		if err != nil {
			return "", err
		}
		return callbackData(k, strconv.FormatInt(id, 10)), nil
	case btnRetryVoice:
		job := voiceJob{ID: tok, Chat: int64(key.Chat), Thread: int(key.Thread), Kind: "voice note", Name: "voice.ogg", Received: now}
		if err := keepVoice(b.Config(), job, []byte("OggS")); err != nil {
			return "", err
		}
		return callbackData(k, tok), nil
	}
	return "", fmt.Errorf("own a %q button: OwnButton does not know this kind", kind)
}
