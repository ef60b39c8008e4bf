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
// message from the phone goes to a CLI that may be stale, untether reads
// what was appended to the transcript since it last looked
// (transcript.Since, from a Mark), sets apart the turns it wrote itself (by
// the uuids it gave its messages, transcript.Delta.Foreign), and, when
// someone else added turns, restarts the CLI with --resume first (it reads
// the whole transcript when it starts), saying "picked up N turns from the
// terminal" in the turn's progress and answer. A CLI that is not running
// is started for the message anyway, so it sees everything; the note is
// then said all the same.
//
// The check runs in the hand-over, off the actor (chat.Outgoing.CheckFirst),
// and only when the chat's CLI is idle or not running: a restart while a
// turn runs would cut it off, and the turns are counted at the next message
// instead (the mark moves only when a check ran). Only on this machine: a
// project on another host has its transcripts there (handoff.go says so).
// The mark is the chat's memory, not stored: after a restart of untether
// the first message starts a new CLI anyway, which reads everything.

// ownMax bounds how many message uuids a chat remembers as its own.
const ownMax = 512

// pickup is what a chat knows of its session's transcript.
type pickup struct {
	id     string          // the session the mark is of
	mark   transcript.Mark // where the transcript stood when last read
	marked bool
	stamp  bool // a Stamp is on its way (ProcessStarted)
	own    map[string]bool
	order  []string // own, oldest first, to forget the oldest
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

// about makes pk about session id, forgetting the mark of another one.
func (pk *pickup) about(id string) {
	if pk.id != id {
		pk.id, pk.mark, pk.marked, pk.stamp = id, transcript.Mark{}, false, false
	}
}

// onEvent remembers the uuids of the chat's own messages, and marks the
// transcript when a CLI starts without a mark (a prewarmed one).
func (m *Module) onEvent(c *chat.Chat, ev runner.Event) {
	pk := m.pickup.Get(c)
	switch e := ev.(type) {
	case runner.MessageLifecycle:
		if e.Wakeup == "" {
			pk.noteOwn(e.UUID)
		}
	case runner.TurnCompleted:
		for _, u := range e.Messages {
			pk.noteOwn(u)
		}
	case runner.ProcessStarted:
		m.markStarted(c, pk)
	}
}

// markStarted stamps the transcript of a CLI that started with no mark
// taken (a prewarm at start-up): what is appended from now on is news to it.
func (m *Module) markStarted(c *chat.Chat, pk *pickup) {
	sess := c.Session()
	dir := c.SessionDir()
	if sess == nil || dir == "" {
		return
	}
	id := string(sess.ID())
	pk.about(id)
	if pk.marked || pk.stamp {
		return
	}
	pk.stamp = true
	home := m.cliHome(m.sessionProject(c))
	c.Offload(func(context.Context) func() {
		mark, err := stampOf(home, dir, id)
		return func() {
			if pk.id != id || pk.marked {
				return
			}
			pk.stamp = false
			if err != nil {
				c.Log().Warn().Err(err).Msg("mark the session's transcript")
				return
			}
			pk.mark, pk.marked = mark, true
		}
	})
}

// stampOf is the Mark of session id's transcript in dir; a session with
// no transcript yet has the zero Mark (everything in it will be new).
func stampOf(home, dir, id string) (transcript.Mark, error) {
	path, err := transcript.Path(home, dir, transcript.SessionID(id))
	if err != nil {
		return transcript.Mark{}, err
	}
	mark, err := transcript.Stamp(path)
	if errors.Is(err, fs.ErrNotExist) {
		return transcript.Mark{}, nil
	}
	return mark, err
}

// checkTranscript is the OnSend part of the pickup: a message to a local
// CLI that is idle or not running reads the transcript first.
func (m *Module) checkTranscript(c *chat.Chat, o *chat.Outgoing, sp spot) {
	if !sp.local {
		return
	}
	if sess := c.Session(); sess != nil && sess.PID() != 0 && !c.SessionIdle() {
		return // a restart would cut off what runs; the next message checks
	}
	pk := m.pickup.Get(c)
	snap := *pk
	snap.own = make(map[string]bool, len(pk.own))
	for u := range pk.own {
		snap.own[u] = true
	}
	home, dir := sp.home, sp.dir
	o.CheckFirst(func(ctx context.Context, sess *runner.Session) {
		id := string(sess.ID())
		if snap.id != id || !snap.marked {
			// Nothing to compare with: the CLI that runs this message (one
			// started for it, or a prewarmed one that is not marked yet) is
			// taken as having read the transcript as it is now.
			mark, err := stampOf(home, dir, id)
			c.Post(func() { m.marked(c, id, mark, err) })
			return
		}
		path, err := transcript.Path(home, dir, transcript.SessionID(id))
		var d transcript.Delta
		next := snap.mark
		if err == nil {
			d, next, err = transcript.Since(path, snap.mark)
		}
		if err != nil {
			c.Post(func() { m.marked(c, id, transcript.Mark{}, err) })
			return
		}
		_, n := d.Foreign(func(uuid string) bool { return snap.own[uuid] })
		restart := n > 0 || d.Rewritten
		if restart && sess.PID() != 0 {
			if cerr := sess.CloseProcess(ctx); cerr != nil {
				c.Log().Warn().Err(cerr).Msg("restart the CLI to pick up the terminal's turns")
			}
		}
		c.Post(func() {
			m.marked(c, id, next, nil)
			if restart {
				c.Log().Info().Int("turns", n).Bool("rewritten", d.Rewritten).Msg("the session's transcript was extended outside untether: resuming it anew")
			}
			if n > 0 {
				c.AddTurnNote(pickedUp(n))
			}
		})
	})
}

// marked keeps the mark a check took of session id's transcript.
func (m *Module) marked(c *chat.Chat, id string, mark transcript.Mark, err error) {
	pk := m.pickup.Get(c)
	pk.about(id)
	if err != nil {
		// Not fatal: the message goes on; the next one marks again.
		c.Log().Warn().Err(err).Msg("read the session's transcript")
		pk.marked = false
		return
	}
	pk.mark, pk.marked, pk.stamp = mark, true, false
}

// pickedUp is the turn's note on what it picked up.
func pickedUp(n int) string {
	if n == 1 {
		return "💻 picked up 1 turn from the terminal"
	}
	return "💻 picked up " + strconv.Itoa(n) + " turns from the terminal"
}
