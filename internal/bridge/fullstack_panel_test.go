package bridge_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner"
	"github.com/untether/untether/internal/telegramtest"
)

// panelIn sends /panel and waits for the panel.
func (r *rig) panelIn(chat telegramtest.ChatID, opts ...telegramtest.UserOption) telegramtest.Message {
	r.t.Helper()
	in := r.tg.UserSends(chat, telegramtest.User{ID: alice, FirstName: "Alice"}, "/panel", opts...)
	return r.waitBot(chat, "the panel", func(m telegramtest.Message) bool {
		return m.ID > in.ID && m.Thread == in.Thread && strings.HasPrefix(m.Text, "🎛 Control panel") && buttonData(m, "🧠 Model") != ""
	})
}

// panelShows waits for the panel to show all of want, in its text or on
// its buttons.
func (r *rig) panelShows(chat telegramtest.ChatID, panel telegramtest.Message, want ...string) telegramtest.Message {
	r.t.Helper()
	return r.waitBot(chat, "the panel showing "+strings.Join(want, ", "), func(m telegramtest.Message) bool {
		if m.ID != panel.ID {
			return false
		}
		for _, w := range want {
			if !strings.Contains(m.Text, w) && buttonData(m, w) == "" {
				return false
			}
		}
		return true
	})
}

// panelStored waits for the state database to hold id as key's panel.
func (r *rig) panelStored(key state.ChatKey, id telegramtest.MessageID) {
	r.t.Helper()
	require.Eventually(r.t, func() bool {
		p, err := r.store.GetPanel(context.Background(), key)
		return err == nil && p.MessageID == state.MessageID(id)
	}, wait, 20*time.Millisecond)
}

// menuFrom presses label on the panel and waits for the menu it opens.
func (r *rig) menuFrom(chat telegramtest.ChatID, panel telegramtest.Message, label, contains string) telegramtest.Message {
	r.t.Helper()
	data := buttonData(panel, label)
	require.NotEmpty(r.t, data, "%q on the panel", label)
	q, err := r.tg.TryUserPresses(chat, telegramtest.User{ID: alice, FirstName: "Alice"}, panel.ID, data)
	require.NoError(r.t, err)
	r.answerOf(q)
	return r.waitBot(chat, "the menu of "+label, func(m telegramtest.Message) bool {
		return m.ReplyTo == panel.ID && strings.Contains(m.Text, contains) && len(m.Keyboard) > 0
	})
}

// TestPanelFollowsEveryChange: /panel shows the chat's model, effort,
// mode and project with a button each; a button opens the same menu as
// its command, and the panel is edited to show the change, whether it
// came from its own button, a typed command, the CLI (a plan approved
// switches the mode) or a reload of the config. A press the command
// would refuse (a project switch while Claude works) is refused with the
// command's reason and changes nothing.
func TestPanelFollowsEveryChange(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	beta := realDir(t)
	r := newRig(t, withProjects(map[string]config.Project{"beta": {Path: beta}}, func(c *config.Config) {
		c.Claude.Models = []string{"claude-sonnet-4-5", "claude-opus-4-5"}
	}))

	p := r.panelIn(chat)
	assert.Contains(t, p.Text, "Model: the CLI's default\nEffort: the CLI's default\nMode: default\nProject: default\n")
	for _, label := range []string{"⚡ Effort", "🛡 Mode: default", "📁 Project: default", "🆕 New session", "📜 Sessions", "⏹ Cancel"} {
		assert.NotEmpty(t, buttonData(p, label), label)
	}
	assert.Empty(t, buttonData(p, "🌿 Branch"), "no worktrees, no branch to choose")
	r.panelStored(key, p.ID)

	menu := r.menuFrom(chat, p, "🛡 Mode", "Choose the mode for this chat")
	assert.Empty(t, buttonData(menu, "bypassPermissions"), "the same menu: only allowed modes")
	r.pickIn(chat, menu, "plan", "Permission mode: plan")
	p = r.panelShows(chat, p, "Mode: plan", "🛡 Mode: plan")

	r.command(chat, "/effort high", "Effort: high")
	r.panelShows(chat, p, "Effort: high")
	menu = r.menuFrom(chat, p, "🧠 Model", "Choose the model for this chat")
	r.pickIn(chat, menu, "claude-sonnet-4-5", "Model: claude-sonnet-4-5")
	r.panelShows(chat, p, "Model: claude-sonnet-4-5")

	in := r.say(chat, alice, "PLANIT add a button")
	plan := r.approvalMessage(chat, "Add a button")
	r.tg.UserPresses(chat, plan.ID, buttonData(plan, "Approve plan"))
	r.finalAnswer(chat, in.ID, "Plan approved")
	p = r.panelShows(chat, p, "Mode: default", "🛡 Mode: default")
	assert.Equal(t, "default", r.storedChat(key).PermissionMode, "the CLI's own switch")

	menu = r.menuFrom(chat, p, "📁 Project", "Choose a project")
	r.pickIn(chat, menu, "beta", "works in beta")
	r.command(chat, "/effort default", "Effort: Claude Code's default")
	p = r.panelShows(chat, p, "Project: beta", "Effort: the CLI's default")

	cfg := r.config()
	cfg.Projects = map[string]config.Project{"beta": {Path: beta, Effort: runner.EffortMax}}
	r.b.Reload(cfg)
	p = r.panelShows(chat, p, "Effort: max", "⚡ Effort: max")

	slow := r.say(chat, alice, "SLOW please")
	r.waitBot(chat, "progress", func(m telegramtest.Message) bool { return m.ReplyTo == slow.ID })
	menu = r.menuFrom(chat, p, "📁 Project", "Choose a project")
	r.pickIn(chat, menu, "default", "Claude is still working in beta: let it finish or /cancel first, then switch.")
	q := r.tg.UserPresses(chat, p.ID, buttonData(p, "⏹ Cancel"))
	r.answerOf(q)
	r.waitBot(chat, "stopped", func(m telegramtest.Message) bool { return m.ReplyTo == slow.ID && strings.Contains(m.Text, "Stopped") })
	after := r.mustMessage(chat, p.ID)
	assert.Contains(t, after.Text, "Project: beta", "the refused press changed nothing")
	assert.Equal(t, "beta", r.storedChat(key).Project)
}

// TestPanelSurvivesARestart: after a restart the panel is redrawn (the
// config changed meanwhile: the effort it shows follows), and its buttons,
// shown before the restart, still work.
func TestPanelSurvivesARestart(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	p := r.panelIn(chat)
	r.panelStored(state.ChatKey{Chat: state.ChatID(alice)}, p.ID)
	r.menuFrom(chat, p, "⚡ Effort", "Choose the effort for this chat")

	r.stop()
	r.mutate = func(c *config.Config) { c.Claude.Effort = runner.EffortXHigh }
	r.start()
	p = r.panelShows(chat, p, "Effort: xhigh", "⚡ Effort: xhigh")

	menu := r.menuFrom(chat, p, "🛡 Mode", "Choose the mode for this chat")
	r.pickIn(chat, menu, "acceptEdits", "Permission mode: acceptEdits")
	r.panelShows(chat, p, "Mode: acceptEdits")
}

// TestPanelPinsAndTopics: with pin_panel the panel is pinned and the one
// it replaces unpinned (and says it was replaced); a group where the bot
// may not pin gets the panel unpinned and is told why; each forum topic
// has its own panel, and a press changes only its own topic.
func TestPanelPinsAndTopics(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withConfig(func(c *config.Config) {
		c.Telegram.PinPanel = true
		c.Telegram.AllowedChatIDs = []int64{int64(forum)}
	}))
	first := r.panelIn(chat)
	second := r.panelIn(chat)
	r.tg.WaitFor(wait, func(sn *telegramtest.Snapshot) bool {
		a, _ := sn.Message(chat, first.ID)
		b, _ := sn.Message(chat, second.ID)
		return !a.Pinned && b.Pinned
	})
	old := r.panelShows(chat, first, "replaced by a newer one")
	assert.Empty(t, old.Keyboard)

	r.tg.AddChat(telegramtest.Chat{ID: forum, Type: telegramtest.Supergroup, Title: "work", IsForum: true})
	a, b := r.tg.AddTopic(forum), r.tg.AddTopic(forum)
	pa := r.panelIn(forum, telegramtest.InTopic(a))
	r.waitBot(forum, "pin refused", func(m telegramtest.Message) bool {
		return m.ReplyTo == pa.ID && m.Text == "📌 The panel could not be pinned: not enough rights to manage pinned messages in the chat. "+
			"In a group the bot must be an admin allowed to pin messages."
	})
	pb := r.panelIn(forum, telegramtest.InTopic(b))
	assert.Equal(t, a, pa.Thread)
	assert.Equal(t, b, pb.Thread)
	menu := r.menuFrom(forum, pa, "🛡 Mode", "Choose the mode for this chat") // /mode's own words, in a topic too
	r.pickIn(forum, menu, "plan", "Permission mode: plan")
	r.panelShows(forum, pa, "Mode: plan")
	assert.Contains(t, r.mustMessage(forum, pb.ID).Text, "Mode: default", "the other topic's panel")
	assert.Equal(t, "plan", r.storedChat(state.ChatKey{Chat: state.ChatID(forum), Thread: state.ThreadID(a)}).PermissionMode)
}

// panelsIn lists the panels the chat shows: the bot's messages, not
// deleted, that are a control panel.
func panelsIn(sn *telegramtest.Snapshot, chat telegramtest.ChatID) []telegramtest.MessageID {
	var ids []telegramtest.MessageID
	for _, m := range sn.BotMessages(chat) {
		if strings.HasPrefix(m.Text, "🎛") {
			ids = append(ids, m.ID)
		}
	}
	return ids
}

// TestPanelDeletedByTheUserStaysGone: a panel the user deleted is not sent
// again when what it shows changes (its edit finds it gone): the state
// database forgets it, and with it its pin, so later changes try no edit
// and the next /panel unpins nothing; that new panel and its buttons work.
func TestPanelDeletedByTheUserStaysGone(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withConfig(func(c *config.Config) { c.Telegram.PinPanel = true }))
	p := r.panelIn(chat)
	r.panelStored(key, p.ID)
	r.tg.WaitFor(wait, func(sn *telegramtest.Snapshot) bool { m, _ := sn.Message(chat, p.ID); return m.Pinned })
	editOfP := func(c telegramtest.Call) bool {
		return c.Method == "editMessageText" && c.Params["message_id"] == strconv.Itoa(int(p.ID))
	}

	r.tg.UserDeletes(chat, p.ID)
	r.command(chat, "/effort high", "Effort: high")
	r.tg.WaitFor(wait, func(sn *telegramtest.Snapshot) bool {
		return slices.ContainsFunc(sn.CallsTo(chat), func(c telegramtest.Call) bool { return editOfP(c) && c.Status == 400 })
	})
	forgotten := func() bool {
		_, err := r.store.GetPanel(context.Background(), key)
		return errors.Is(err, state.ErrNotFound)
	}
	require.Eventually(t, func() bool { return forgotten() || len(panelsIn(r.tg.Snapshot(), chat)) > 0 }, wait, 20*time.Millisecond)
	require.Empty(t, panelsIn(r.tg.Snapshot(), chat), "the deleted panel came back as a new message")
	require.True(t, forgotten(), "the deleted panel is forgotten")
	r.command(chat, "/mode plan", "Permission mode: plan")

	p2 := r.panelIn(chat)
	assert.Equal(t, []telegramtest.MessageID{p2.ID}, panelsIn(r.tg.Snapshot(), chat))
	var sends, edits int
	for _, c := range r.tg.CallsTo(chat) {
		switch {
		case c.Method == "sendMessage" && strings.HasPrefix(c.Params["text"], "🎛"):
			sends++
		case editOfP(c):
			edits++
		case c.Method == "unpinChatMessage":
			t.Errorf("unpinned message %s: the deleted panel's pin was kept", c.Params["message_id"])
		}
	}
	assert.Equal(t, 2, sends, "the two /panel, nothing else")
	assert.Equal(t, 1, edits, "only the edit that found the panel gone")

	r.panelStored(key, p2.ID)
	menu := r.menuFrom(chat, p2, "⚡ Effort", "Choose the effort for this chat")
	r.pickIn(chat, menu, "max", "Effort: max")
	r.panelShows(chat, p2, "Effort: max", "🛡 Mode: plan")
}
