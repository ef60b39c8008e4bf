package chat

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// reconcile cleans up what the previous run left on screen: journaled
// messages it never delivered are sent, pending approvals are marked
// interrupted with a ▶️ Continue (their CLI process is gone) and progress messages say the turn
// was interrupted, so no button or spinner is left that nothing serves.
// A chat the config no longer serves (a group taken off allowed_chat_ids,
// a user off allowed_user_ids) gets none of it: its journaled messages
// are dropped unsent, and its messages are not edited.
func (b *Engine) reconcile(ctx context.Context) error {
	items, err := b.store.PendingOutbox(ctx)
	if err != nil {
		return fmt.Errorf("read outbox journal: %w", err)
	}
	if len(items) > 0 {
		// Replayed: final answers and notices the previous run accepted but
		// could not deliver.
		entries := make([]outbox.JournalEntry, 0, len(items))
		var unsent []outbox.JournalEntry
		for _, it := range items {
			e := outbox.JournalEntry{ID: outbox.JournalID(it.ID),
				Key: outbox.ChatKey{Chat: int64(it.Key.Chat), Thread: int(it.Key.Thread)}, Kind: it.Kind, Payload: it.Payload}
			switch {
			case !b.chatServed(it.Key):
				b.log.Warn().Str("chat", it.Key.String()).Msg("not sending a message the previous run left: the chat is no longer allowed")
			case strings.HasPrefix(outbox.EntryTag(e), tagApproval):
				// An approval prompt's request died with its CLI process:
				// sending it now would show buttons nothing serves.
			default:
				entries = append(entries, e)
				continue
			}
			unsent = append(unsent, e)
			if err := b.store.AckOutbox(ctx, it.ID); err != nil {
				b.log.Warn().Err(err).Msg("drop a journaled message")
			}
		}
		// A file's move to .untether/sent/ is finished either way, so the
		// next turn does not find it again.
		for _, h := range b.reg.onReplay { // the files module: moves a crash interrupted are finished first
			h(append(slices.Clip(entries), unsent...))
		}
		if _, err := b.out.Restore(ctx, entries); err != nil {
			b.log.Error().Err(err).Msg("restore journaled messages")
		}
		b.log.Info().Int("messages", len(entries)).Msg("re-sending messages the previous run could not deliver")
	}

	now := time.Now()
	pending, err := b.store.PendingApprovals(ctx)
	if err != nil {
		return fmt.Errorf("read pending approvals: %w", err)
	}
	for _, a := range pending {
		// Its CLI died with the previous run (a crash, a kill): as after a
		// drain, ▶️ Continue resumes the session and lets Claude ask again
		// (drain.go). A chat no longer served gets no button.
		decision, served := state.DecisionInterrupted, a.MessageID != 0 && b.chatServed(a.Key)
		if !served {
			decision = state.DecisionExpired
		}
		if err := b.store.DecideApproval(ctx, a.Token, decision, 0, now, "untether restarted"); err != nil {
			b.log.Warn().Err(err).Str("token", a.Token).Msg("close an approval the previous run left")
			served = false // no Continue for an approval the store does not hold as interrupted
		}
		if a.MessageID == 0 || !b.chatServed(a.Key) {
			continue
		}
		req := runner.ApprovalRequested{RequestID: runner.RequestID(a.RequestID), Tool: a.Tool, DisplayName: a.Tool,
			Input: a.InputJSON, Summary: a.Summary}
		content := outbox.Content{Text: render.RenderApprovalDecided(req, render.DecisionInterrupted, "", now)}
		if served {
			content.Text += "\n\n" + crashContinueHint
			content.Keyboard = render.Keyboard{Rows: [][]render.Button{{{Text: "▶️ Continue", CallbackData: CallbackData(btnContinue, a.Token)}}}}
		}
		b.out.Edit(ctx, b.out.Adopt(outKey(a.Key), outbox.MessageID(a.MessageID)), outbox.High, content)
	}

	live, err := b.store.ListLive(ctx)
	if err != nil {
		return fmt.Errorf("read live messages: %w", err)
	}
	for _, l := range live {
		if l.Kind == state.LiveProgress && b.chatServed(l.Key) {
			b.out.Edit(ctx, b.out.Adopt(outKey(l.Key), outbox.MessageID(l.MessageID)), outbox.High,
				outbox.Content{Text: "⚠️ <b>Interrupted</b>: untether restarted during this turn. Send a message to continue; the session resumes with its history."})
		}
		if err := b.store.RemoveLive(ctx, l.Key, l.MessageID); err != nil {
			b.log.Warn().Err(err).Msg("forget orphaned live message")
		}
	}
	if len(pending) > 0 || len(live) > 0 {
		b.log.Info().Int("approvals", len(pending)).Int("live_messages", len(live)).Msg("reconciled messages left by the previous run")
	}
	return nil
}

// crashContinueHint explains an approval whose CLI died with the previous
// run; continueHint (drain.go) is its counterpart after a drain.
const crashContinueHint = "⏸ untether stopped before anyone decided (it was killed or crashed), so Claude stopped here. " +
	"Press ▶️ Continue: the session resumes and Claude asks again if it still needs this."

func outKey(k state.ChatKey) outbox.ChatKey {
	return outbox.ChatKey{Chat: int64(k.Chat), Thread: int(k.Thread)}
}
