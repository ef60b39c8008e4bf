package places

import (
	"context"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// A claude outside untether that runs the chat's session (issue 26 §2):
// a person resumed it at a terminal on this machine and has not left.
// Were Claude here to answer too, each CLI would go on from its own copy
// of the conversation and neither would see the other's turns. So a
// message from the phone is held and the chat asked first: ▶️ Continue
// anyway sends it (and those held behind it), ⏳ Wait sends them once no
// such claude runs any more (watched from Start; the transcript is then
// read as for any message, so what the terminal wrote is picked up). The
// claude is found in /proc (runner.FindOutside), so only for a project on
// this machine; what is shown of it is its pid and how it names the
// session, never its command line, which may hold anything.
//
// A held message keeps the update that brought it unconfirmed (c.Hold):
// a restart of untether while it waits hands it in again, and the gate
// asks again if that claude still runs (the old question's buttons then
// say that untether restarted).

// Buttons of the question (engine-table tokens, one per question).
const (
	btnContinueAnyway chat.ButtonKind = 'O'
	btnWaitTerminal   chat.ButtonKind = 'H'
)

// outsidePoll is how often a ⏳ Wait looks for the claude again.
const outsidePoll = time.Second

// held is a chat's messages held while a claude outside untether runs its
// session, and the question about them.
type held struct {
	token    string // the question's buttons; "" when nothing is held
	msgs     []*chat.Outgoing
	question *outbox.Message
	query    runner.OutsideQuery
	// pass are messages released with ▶️ Continue anyway: not asked about
	// again on their way through the gate.
	pass map[*chat.Outgoing]bool
}

// waits are the chats whose ⏳ Wait runs, by chat: what to look for.
type waits struct {
	mu sync.Mutex
	m  map[state.ChatKey]waiting
}

type waiting struct {
	token string
	query runner.OutsideQuery
}

// passOutside holds o when a claude outside untether runs the session it
// goes to, or when messages are held already (they go in order), and
// reports whether o may go on.
func (m *Module) passOutside(c *chat.Chat, o *chat.Outgoing, sp spot) bool {
	h := m.hold.Get(c)
	if h.pass[o] {
		delete(h.pass, o)
		return true
	}
	if h.token != "" {
		c.Hold(o)
		h.msgs = append(h.msgs, o)
		c.Reply("⏸ Held too, behind your earlier message: it goes when that one does.", o.MsgID())
		return false
	}
	id, err := runner.ParseSessionID(sp.id)
	if !sp.local || err != nil {
		return true // a new session, or one on another host (handoff.go says so)
	}
	q := runner.OutsideQuery{ID: id, Dir: sp.dir, Names: cliNames(sp.p.Binary)}
	if sess := c.Session(); sess != nil && sess.PID() != 0 {
		q.Exclude = map[int]bool{sess.PID(): true}
	}
	// A scan of /proc reads every process's stat and command line: 2.4 ms
	// for 84 processes on a busy 2-core machine (runner's
	// BenchmarkFindOutside), in proportion to the processes. Once a
	// message, on the actor.
	found, err := runner.FindOutside(q)
	if err != nil {
		c.Log().Warn().Err(err).Msg("look for a claude outside untether; the message goes on")
		return true
	}
	if len(found) == 0 {
		return true
	}
	c.Log().Info().Int("pid", found[0].PID).Str("how", found[0].How).Msg("a claude outside untether runs this session: asking first")
	c.Hold(o)
	*h = held{token: chat.NewToken(), msgs: []*chat.Outgoing{o}, query: q}
	c.RegisterButton(h.token)
	kb := render.Keyboard{Rows: [][]render.Button{{
		{Text: "▶️ Continue anyway", CallbackData: chat.CallbackData(btnContinueAnyway, h.token)},
		{Text: "⏳ Wait", CallbackData: chat.CallbackData(btnWaitTerminal, h.token)},
	}}}
	h.question = c.SendMessage(outbox.High, outbox.Content{Text: outsideText(found), Keyboard: kb},
		outbox.SendOptions{ReplyTo: outbox.MessageID(o.MsgID())})
	return false
}

// cliNames are the program names FindOutside takes for the CLI besides
// claude's own: the configured binary's.
func cliNames(binary string) []string {
	if binary == "" {
		return nil
	}
	return []string{filepath.Base(binary)}
}

// outsideText asks what to do about a message while found run its session.
func outsideText(found []runner.OutsideCLI) string {
	who := "A claude outside untether runs"
	if len(found) > 1 {
		who = strconv.Itoa(len(found)) + " claude processes outside untether run"
	}
	return "💻 " + who + " this session on this machine (" + pidsText(found) + "), at a terminal most likely. " +
		"If Claude here answered too, each would go on from its own copy of the conversation, and neither would see the other's turns.\n\n" +
		"▶️ Continue anyway, or ⏳ Wait: your message then goes once it has exited, with what it wrote picked up."
}

// pidsText names the processes by pid and how they name the session.
func pidsText(found []runner.OutsideCLI) string {
	text := ""
	for i, f := range found {
		if i == 3 {
			text += ", …"
			break
		}
		if i > 0 {
			text += ", "
		}
		text += "pid " + strconv.Itoa(f.PID) + " with " + f.How
	}
	return render.EscapeHTML(text)
}

// continueAnyway is ▶️ Continue anyway: the held messages go now.
func (m *Module) continueAnyway(c *chat.Chat, token string) {
	h := m.hold.Get(c)
	if h.token != token {
		return
	}
	m.unwatch(c.Key(), token)
	msgs, question := m.release(c, h)
	c.EditMessage(question, outbox.High, outbox.Content{Text: "▶️ Sent anyway, while the claude outside untether runs this session too."})
	// Each goes through the gates at once (SendOutgoing), so the pass is
	// used up, or left by a gate before this one, by the end of the loop.
	h.pass = map[*chat.Outgoing]bool{}
	for _, o := range msgs {
		h.pass[o] = true
	}
	for _, o := range msgs {
		c.SendOutgoing(o)
	}
	h.pass = nil
}

// waitForTerminal is ⏳ Wait: the held messages go once no claude outside
// untether runs the session.
func (m *Module) waitForTerminal(c *chat.Chat, token string) {
	h := m.hold.Get(c)
	if h.token != token {
		return
	}
	m.waits.mu.Lock()
	if m.waits.m == nil {
		m.waits.m = map[state.ChatKey]waiting{}
	}
	m.waits.m[c.Key()] = waiting{token: token, query: h.query}
	m.waits.mu.Unlock()
	kb := render.Keyboard{Rows: [][]render.Button{{{Text: "▶️ Continue anyway", CallbackData: chat.CallbackData(btnContinueAnyway, token)}}}}
	c.EditMessage(h.question, outbox.High, outbox.Content{Text: "⏳ Waiting for the claude outside untether to exit; your message goes then.", Keyboard: kb})
}

// outsideGone runs on the chat once the claude a ⏳ Wait waited for is
// gone: the held messages go (through the gate again).
func (m *Module) outsideGone(c *chat.Chat, token string) {
	h := m.hold.Get(c)
	if h.token != token {
		return
	}
	msgs, question := m.release(c, h)
	c.EditMessage(question, outbox.High, outbox.Content{Text: "✅ The claude outside untether has exited, so your message went on to Claude."})
	for _, o := range msgs {
		c.SendOutgoing(o)
	}
}

// release ends the question: its buttons go, and the held messages are
// handed back.
func (m *Module) release(c *chat.Chat, h *held) ([]*chat.Outgoing, *outbox.Message) {
	c.ForgetButton(h.token)
	msgs, question := h.msgs, h.question
	*h = held{}
	return msgs, question
}

// unwatch stops the ⏳ Wait of key, if it is token's.
func (m *Module) unwatch(key state.ChatKey, token string) {
	m.waits.mu.Lock()
	defer m.waits.mu.Unlock()
	if w, ok := m.waits.m[key]; ok && w.token == token {
		delete(m.waits.m, key)
	}
}

// Start watches for the claude processes ⏳ Wait waits for, until ctx
// ends.
func (m *Module) Start(ctx context.Context) {
	tick := time.NewTicker(outsidePoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			m.pollWaits()
		}
	}
}

// pollWaits looks again for each waited-for claude, and hands the chats
// whose claude is gone their held messages.
func (m *Module) pollWaits() {
	m.waits.mu.Lock()
	todo := make(map[state.ChatKey]waiting, len(m.waits.m))
	for k, w := range m.waits.m {
		todo[k] = w
	}
	m.waits.mu.Unlock()
	for key, w := range todo {
		found, err := runner.FindOutside(w.query)
		if err != nil || len(found) > 0 {
			continue
		}
		m.unwatch(key, w.token)
		if c := m.host.Chat(key); c != nil {
			c.Post(func() { m.outsideGone(c, w.token) })
		}
	}
}
