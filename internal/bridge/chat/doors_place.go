package chat

import (
	"fmt"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner"
)

// Doors: where the chat works, and its session there.

// Session is the chat's live CLI session, nil if it has none.
func (c *Chat) Session() *runner.Session { return c.sess }

// Project is the project the chat works in under cfg: its choice while
// the config has it and lets it in, else the default.
func (c *Chat) Project(cfg *config.Config) config.ProjectSettings { return c.projectFor(cfg) }

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

// ResetSession forgets the chat's session where it works, as /new does:
// the next message starts a fresh one.
func (c *Chat) ResetSession() { c.resetSession() }

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

// SessionDir is the directory the live CLI runs in on this machine: ""
// without one, or for a project on another host.
func (c *Chat) SessionDir() string { return c.sessDir }

// UploadDir is where the chat's files go: the live CLI's directory, else
// its place's; "" for a project on another host.
func (c *Chat) UploadDir(cfg *config.Config) string { return c.uploadDir(cfg) }
