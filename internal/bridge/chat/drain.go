package chat

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// A drain (SIGTERM) lets working turns finish, but a turn blocked on a human
// decision could hold `systemctl restart` for the whole drain_timeout while
// nobody presses anything. Such turns are stopped at once instead; the
// approval message says so and carries a ▶️ Continue button that, after the
// restart, resumes the session and asks Claude to go on (so it asks for the
// same tool again). The button outlives the process: its token is the
// approval's, looked up in the state store.

// stopBudget bounds what Shutdown takes once its context ends: interrupting
// what still runs, closing the CLIs (killing them if they do not go),
// flushing the outbox and waiting for the chats' offloaded work
// (workWaitAtShutdown). cmd/untether announces drain_timeout plus more
// than this to systemd (EXTEND_TIMEOUT_USEC), and the units'
// TimeoutStopSec covers the default drain_timeout plus more than this.
const stopBudget = 22 * time.Second

// flushBudget is the part of stopBudget kept for the outbox: the last
// answers and notices go out at the chats' pace (about one a second each).
const flushBudget = 10 * time.Second

const continueHint = "⏸ untether restarted before anyone decided, so Claude stopped here. " +
	"Press ▶️ Continue once untether is back: the session resumes and Claude asks again if it still needs this."

// releaseHumanWaits stops a turn that waits only on a human decision, so a
// drain does not wait for a press that may never come.
func (c *Chat) releaseHumanWaits() {
	if len(c.approvals) == 0 {
		return
	}
	now := time.Now()
	c.stoppedForRestart()
	for _, a := range c.approvals {
		// Deny with interrupt answers the control_request and ends the turn.
		if err := a.sess.Respond(a.req.RequestID, runner.Decision{Behavior: runner.Deny, Interrupt: true,
			Message: "untether is restarting; the user will be asked again after the restart."}); err != nil {
			c.logger().Info().Err(err).Msg("stop an approval for the restart")
		}
		if err := c.b.store.DecideApproval(c.ctx(), a.token, state.DecisionInterrupted, 0, now, "untether restarted"); err != nil &&
			!errors.Is(err, state.ErrAlreadyDecided) {
			c.logger().Error().Err(err).Msg("record approval interrupted by the restart")
		}
		html := render.RenderApprovalDecided(a.req, render.DecisionInterrupted, "", now) + "\n\n" + continueHint
		kb := render.Keyboard{Rows: [][]render.Button{{{Text: "▶️ Continue", CallbackData: CallbackData(btnContinue, a.token)}}}}
		c.b.out.Edit(c.ctx(), a.msg, outbox.High, outbox.Content{Text: html, Keyboard: kb})
		delete(c.approvals, a.token)
		delete(c.byRequest, a.req.RequestID)
		c.b.forgetButton(a.token)
		if c.turn != nil {
			c.turn.view.Resolve(a.req.RequestID)
		}
		c.approvalEnded(a, state.DecisionInterrupted)
	}
	c.logger().Info().Msg("stopped a turn waiting on a decision, for the restart")
	c.updateCounts()
}

// stoppedForRestart marks the running turn as interrupted by the restart,
// so that its progress, its stopped tool calls and its answer do not say
// the user cancelled it.
func (c *Chat) stoppedForRestart() {
	if c.turn != nil && !c.turn.done {
		c.turn.view.StoppedForRestart = true
	}
}

// resolveContinue finds the interrupted approval a ▶️ Continue press is
// for; during a drain the engine asks the user to wait first.
func (b *Engine) resolveContinue(ctx context.Context, cq *models.CallbackQuery, token string) (state.ChatKey, func(*Chat), string) {
	a, err := b.store.GetApproval(ctx, token)
	if err != nil || a.Decision != state.DecisionInterrupted || a.Note == "continued" {
		return state.ChatKey{}, nil, ExpiredText
	}
	return a.Key, func(c *Chat) { c.continueAfterRestart(a, cq.ID, cq.From) }, ""
}

// continueAfterRestart resumes the session of an approval a restart
// interrupted and asks Claude to go on. A chat that moved to another
// session since (/project, /branch, /new, a Resume, a scheduled run) is
// moved back to that session's project and branch first; a busy one is
// told to finish first, and the button keeps working.
func (c *Chat) continueAfterRestart(a state.Approval, callbackID string, from models.User) {
	if !c.enterApprovalSession(a, callbackID) {
		return
	}
	c.b.answerCallback(callbackID, "Continuing…", false)
	ok, err := c.b.store.ContinueApproval(c.ctx(), a.Token)
	if err != nil {
		c.logger().Error().Err(err).Msg("claim an interrupted approval")
		c.reply("⚠️ Could not continue: "+render.EscapeHTML(err.Error()), int(a.MessageID))
		return
	}
	if !ok {
		return // another press won
	}
	req := runner.ApprovalRequested{RequestID: runner.RequestID(a.RequestID), Tool: a.Tool, DisplayName: a.Tool,
		Input: a.InputJSON, Summary: a.Summary}
	html := render.RenderApprovalDecided(req, render.Decision("Continued after the restart"), UserName(from), time.Now())
	c.b.out.Edit(c.ctx(), c.b.out.Adopt(c.outKey, outbox.MessageID(a.MessageID)), outbox.High, outbox.Content{Text: html})
	c.send(runner.UserInput{Text: continuePrompt(a)}, int(a.MessageID), state.UserID(from.ID))
}

// enterApprovalSession makes the approval's session the chat's, switching
// back to where it ran when the chat works in another one now, and reports
// whether Continue may go on. When it may not, the press is answered.
func (c *Chat) enterApprovalSession(a state.Approval, callbackID string) bool {
	if a.SessionID == "" || a.SessionID == c.record().SessionID {
		return true
	}
	if c.busy() {
		_, cur := c.placeFor(c.b.Config())
		c.b.answerCallback(callbackID, "Claude is working in "+cur.String()+" now: let it finish or /cancel first, "+
			"then press ▶️ Continue again.", true)
		return false
	}
	moved := c.resumeSession(a.SessionID, func(html string) { c.reply(html, int(a.MessageID)) }) // sessions.go
	if !moved {
		c.b.answerCallback(callbackID, "Could not go back to that session; the chat says why.", false)
	}
	return moved
}

// continuePrompt tells Claude what happened while it was stopped.
func continuePrompt(a state.Approval) string {
	what := a.Tool
	if a.Summary != "" {
		what += " (" + a.Summary + ")"
	}
	return fmt.Sprintf("untether, the Telegram bridge, restarted while your request to use %s was waiting for the user's decision, "+
		"so it was never answered. Please continue where you left off; if you still need it, request it again.", what)
}

// stopChats waits for the chat actors after the drain deadline: their turns
// were interrupted and their CLIs are closing; a CLI that does not go in
// time is killed, so Shutdown keeps within stopBudget.
func (b *Engine) stopChats(actorsDone <-chan struct{}) error {
	t := time.NewTimer(stopBudget - flushBudget - workWaitAtShutdown - 2*time.Second)
	defer t.Stop()
	select {
	case <-actorsDone:
		return nil
	case <-t.C:
	}
	b.mu.Lock()
	for _, c := range b.chats {
		if s := c.live.Load(); s != nil {
			s.Kill()
		}
	}
	b.mu.Unlock()
	select {
	case <-actorsDone:
		return errors.New("stop chats: CLIs that did not stop in time were killed")
	case <-time.After(2 * time.Second):
		return errors.New("stop chats: some chats did not stop in time")
	}
}
