package places

import (
	"context"
	"errors"
	"io/fs"
	"strconv"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/runner"
	"github.com/untether/untether/internal/transcript"
)

// Taking a session back from a terminal (issue 26 §3). A live CLI keeps
// its conversation in memory: turns a terminal appended to the session's
// transcript meanwhile are not in it, and the phone's next turn would go on
// from the old conversation while both write one transcript. So before a
// message from the phone goes to Claude, untether reads what was appended
// to the transcript since it last looked (transcript.Since, from a Mark),
// sets apart the turns it wrote itself (by the uuids it gave its messages,
// transcript.Delta.ForeignLine), and, when someone else added turns, lets go
// of the live CLI (chat.ReopenSession): the message then resumes the
// session in a new CLI, which reads the whole transcript when it starts.
// The turn says "💻 picked up N turns from the terminal" (also when no CLI
// was running, which would have read them anyway).
//
// Only turns a resume sends to the model are claimed. A terminal that
// resumes the session while the phone's CLI is busy forks it: the phone's
// answer, written after the terminal's turn, follows the phone's prompt,
// so the terminal's turn is on a side branch. The CLI let go of names its
// last entry when it exits, and the resume goes on from there, without
// that turn, nor any the terminal adds after it on its own branch
// (transcript.Delta.ForeignLine, told that entry: the runner reports the
// uuid of each turn's last answer, which is its entry's in the transcript).
// The turn says such turns were not picked up and why, rather than
// claiming them. A CLI that did not exit cleanly (killed) names nothing,
// and a resume may go on from the terminal's branch instead: not told.
//
// The look is cheap where it runs, on the actor before the message's turn
// starts: after each of untether's own turns the mark is moved past that
// turn off the actor (Since from the mark, counting turns someone else
// wrote while it ran), so before the next message Since finds the file as
// it was and reads nothing, unless someone wrote since. A CLI that is busy
// is not restarted (its turn would be cut off): the message goes to it, and
// the turns are picked up at the next message that finds it idle, those
// still on the line. A CLI still open where a reload moved the chat from
// is not restarted either (that would move the session): the message's
// turn says how many turns it does not see. Only on this machine: a project on another host has
// its transcripts there (handoff.go says so). The mark is memory, not stored: after a restart of
// untether a CLI starts anew for the first message, and reads everything.

// ownMax bounds how many message uuids a chat remembers as its own.
const ownMax = 512

// pickup is what a chat knows of its session's transcript.
type pickup struct {
	id     string          // the session the mark is of
	path   string          // its transcript
	mark   transcript.Mark // where the transcript stood when last read
	marked bool
	// unseen counts turns someone else wrote while the live CLI ran one
	// of untether's (found when the mark moved past it) that are on the
	// line a resume goes on from; forked those off it.
	unseen, forked int
	// leaf is the last assistant message of the chat's latest turn, which
	// its CLI names as the session's leaf when it exits: a resume after it
	// goes on from there while nothing follows it (runner
	// TurnCompleted.Leaf, transcript Delta.ForeignLine).
	leaf string
	// gen counts the looks taken on the actor: a mark moved off the actor
	// is kept only when no look was taken meanwhile.
	gen   int
	own   map[string]bool
	order []string // own, oldest first, to forget the oldest
}

// noteOwn remembers uuid as one of the chat's own messages.
func (pk *pickup) noteOwn(uuid runner.MessageUUID) {
	if uuid == "" || pk.own[string(uuid)] {
		return
	}
	if pk.own == nil {
		pk.own = map[string]bool{}
	}
	pk.own[string(uuid)] = true
	pk.order = append(pk.order, string(uuid))
	if len(pk.order) > ownMax {
		delete(pk.own, pk.order[0])
		pk.order = pk.order[1:]
	}
}

// isOwn reports whether uuid is one of the chat's own messages.
func (pk *pickup) isOwn(uuid string) bool { return pk.own[uuid] }

// about makes pk about session id in dir, forgetting the mark of another.
func (pk *pickup) about(id, home, dir string) error {
	path, err := transcript.Path(home, dir, transcript.SessionID(id))
	if err != nil {
		return err
	}
	if pk.id != id || pk.path != path {
		pk.id, pk.path, pk.mark, pk.marked, pk.unseen, pk.forked, pk.leaf = id, path, transcript.Mark{}, false, 0, 0, ""
		pk.gen++
	}
	return nil
}

// stampNow marks the transcript as it is now; one not written yet has the
// zero Mark (everything in it will be new).
func (pk *pickup) stampNow() error {
	mark, err := transcript.Stamp(pk.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		mark = transcript.Mark{}
	case err != nil:
		return err
	}
	pk.mark, pk.marked = mark, true
	pk.gen++
	return nil
}

// onEvent remembers the uuids of the chat's own messages, marks the
// transcript when a CLI starts without a mark (a prewarmed one), and moves
// the mark past each of the chat's own turns.
func (m *Module) onEvent(c *chat.Chat, ev runner.Event) {
	pk := m.pickup.Get(c)
	switch e := ev.(type) {
	case runner.MessageLifecycle:
		if e.Wakeup == "" {
			pk.noteOwn(e.UUID)
		}
	case runner.ProcessStarted:
		sp := m.spotOf(c)
		if !sp.local || sp.id == "" {
			return
		}
		err := pk.about(sp.id, sp.home, sp.dir)
		if err == nil && !pk.marked {
			err = pk.stampNow()
		}
		if err != nil {
			c.Log().Warn().Err(err).Msg("mark the session's transcript")
		}
	case runner.TurnCompleted:
		for _, u := range e.Messages {
			pk.noteOwn(u)
		}
		pk.leaf = e.Leaf // "" when unknown: the leaf written last is taken
		m.markPast(c, pk)
	}
}

// markPast moves the mark past the turn that just ended, off the actor:
// what it read is the turn's own entries, and turns someone else wrote
// meanwhile (unseen by the live CLI), on the line a resume goes on from or
// forked off it.
func (m *Module) markPast(c *chat.Chat, pk *pickup) {
	if !pk.marked || c.SessionDir() == "" {
		return
	}
	gen, path, mark, leaf := pk.gen, pk.path, pk.mark, pk.leaf
	own := make(map[string]bool, len(pk.own))
	for u := range pk.own {
		own[u] = true
	}
	c.Offload(func(context.Context) func() {
		d, next, err := transcript.Since(path, mark)
		return func() {
			if pk.gen != gen || pk.path != path {
				return // a look on the actor read from the same mark meanwhile
			}
			if err != nil {
				c.Log().Warn().Err(err).Msg("read the session's transcript after a turn")
				return
			}
			onLine, forked := d.ForeignLine(func(uuid string) bool { return own[uuid] }, leaf)
			pk.mark, pk.unseen, pk.forked = next, pk.unseen+onLine, pk.forked+forked
			if d.Rewritten {
				pk.unseen++ // the CLI's copy is not the file's any more
			}
		}
	})
}

// checkTranscript is the OnSend part of the pickup: before a message goes
// to a CLI on this machine that is idle or not running, a transcript
// someone else extended makes it resume the session anew.
func (m *Module) checkTranscript(c *chat.Chat, sp spot) {
	if !sp.local || sp.id == "" {
		return
	}
	sess := c.Session()
	live := sess != nil && sess.PID() != 0
	if live && !c.SessionIdle() {
		return // a restart would cut off what runs; the next message looks
	}
	pk := m.pickup.Get(c)
	if err := pk.about(sp.id, sp.home, sp.dir); err != nil {
		c.Log().Warn().Err(err).Msg("find the session's transcript")
		return
	}
	if !pk.marked {
		// Nothing to compare with: the CLI that runs this message (one
		// started for it, or one prewarmed before any mark) is taken as
		// having read the transcript as it is now.
		if err := pk.stampNow(); err != nil {
			c.Log().Warn().Err(err).Msg("mark the session's transcript")
		}
		return
	}
	d, next, err := transcript.Since(pk.path, pk.mark)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Not written yet (a new session's CLI has not finished its first
		// turn): nothing new, and the mark still holds for what comes.
		return
	case err != nil:
		pk.gen++
		c.Log().Warn().Err(err).Msg("read the session's transcript")
		pk.marked = false
		return
	}
	pk.gen++
	// The line the next CLI goes on from is named by the last CLI to exit:
	// the live one, let go of below, names its last answer; with none live
	// the transcript's last "last-prompt" says (ForeignLine with "").
	leaf := ""
	if live {
		leaf = pk.leaf
	}
	n, forked := d.ForeignLine(pk.isOwn, leaf)
	n += pk.unseen
	forked += pk.forked
	pk.mark, pk.unseen, pk.forked = next, 0, 0
	if forked > 0 {
		// Neither the live CLI nor a new one sends them: said, not claimed.
		c.Log().Info().Int("turns", forked).Msg("turns written outside untether are on a branch the session does not go on with")
		c.Post(func() { c.AddTurnNote(forkedOff(forked)) })
	}
	if n == 0 && forked == 0 && !d.Rewritten {
		return
	}
	// Forked turns alone let go of the CLI too, not for them (the new CLI
	// goes on from the same line, without them) but for the session's
	// next resume: with two branches, the CLI resumes from the leaf the
	// last "last-prompt" entry names, and a CLI in stream-json mode writes
	// one after its first turn and when it exits, not after later turns.
	// The terminal's CLI wrote one for its branch when it exited, so while
	// this CLI runs, the resume line at a terminal would go on from the
	// terminal's branch, without this chat's turns since the fork. The CLI
	// let go of writes its own when it exits, and the line is this one for
	// everyone.
	c.Log().Info().Int("turns", n).Int("forked", forked).Bool("rewritten", d.Rewritten).Bool("live", live).
		Msg("the session's transcript was extended outside untether")
	if live {
		if c.SessionPlace() != m.placeNow(c) {
			// A reload moved the chat's place: letting go of the CLI would
			// move the session too, so the message goes on to it as it is.
			// It answers from its own copy of the conversation, and the
			// session forks there: the CLI names its answer when it exits,
			// and a later resume goes on from it, so the terminal's turns
			// are never picked up. The turn says so, rather than a later
			// one claiming them.
			c.Log().Warn().Int("turns", n).Msg("the chat's place moved since its CLI started; not restarting it, so the terminal's turns are not picked up")
			if n > 0 {
				c.Post(func() { c.AddTurnNote(notPickedUp(n)) })
			}
			return
		}
		c.ReopenSession("the session was extended at a terminal")
	}
	if n > 0 {
		// The message's turn starts once the gates let it through.
		c.Post(func() { c.AddTurnNote(pickedUp(n)) })
	}
}

// placeNow is the chat's place under the current config.
func (m *Module) placeNow(c *chat.Chat) chat.Place {
	_, pl := c.Place(c.Config())
	return pl
}

// pickedUp is the turn's note on what it picked up.
func pickedUp(n int) string { return "💻 picked up " + turnsText(n) + " from the terminal" }

// notPickedUp is the turn's note on the terminal's turns its CLI, kept
// where a reload moved the chat from, does not see.
func notPickedUp(n int) string {
	return "💻 " + turnsText(n) + " from the terminal not picked up: a reload moved this chat since Claude here started, " +
		"so it went on from its own copy"
}

// forkedOff is the turn's note on the terminal's turns off the line a
// resume goes on from: typed while Claude here was busy (or left behind by
// a rewind at the terminal), they are in the transcript but neither the
// CLI here nor a resumed one sends them to the model.
func forkedOff(n int) string {
	it, them := "it is", "it"
	if n != 1 {
		it, them = "they are", "them"
	}
	return "💻 " + turnsText(n) + " from the terminal not picked up: " + it +
		" on a branch this conversation does not continue (a turn typed while Claude here was busy forks it), so Claude did not see " + them
}

// turnsText is "1 turn", "2 turns".
func turnsText(n int) string {
	if n == 1 {
		return "1 turn"
	}
	return strconv.Itoa(n) + " turns"
}
