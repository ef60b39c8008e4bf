package bridge_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/telegramtest"
)

// trustScript is the shared script plus the turns the settings tests need:
// Write calls (in default mode they ask, with a setMode acceptEdits
// suggestion) and a model the fake API does not know, refused with a 404
// as the real API refuses one.
func trustScript() fakeapi.Script {
	s := script()
	var rules []fakeapi.Rule
	rules = append(rules, fakeapi.Rule{Name: "unknown-model", When: fakeapi.Match{ModelContains: "no-such-model"},
		Replies: []fakeapi.Reply{{Status: 404, ErrorType: "not_found_error", ErrorMessage: "model: no-such-model"}}})
	// WRITETWO first: its conversation contains WRITEONE too.
	rules = append(rules, fakeapi.ToolTurn("WRITETWO", "Write", map[string]any{"file_path": "{{cwd}}/two.txt", "content": "two\n"}, "Wrote two.")...)
	rules = append(rules, fakeapi.ToolTurn("WRITEONE", "Write", map[string]any{"file_path": "{{cwd}}/one.txt", "content": "one\n"}, "Wrote one.")...)
	s.Rules = append(rules, s.Rules...)
	return s
}

func withTrustScript() rigOption {
	return func(r *rig) { r.claude = claudetest.New(r.t, trustScript()) }
}

// cliArgs is the command line of the chat's live CLI.
func (r *rig) cliArgs(key state.ChatKey) []string {
	r.t.Helper()
	pid := r.b.ChatPID(key)
	require.NotZero(r.t, pid, "the chat has a live CLI")
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	require.NoError(r.t, err)
	return strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
}

// flagValue returns the value after flag in args, "" if absent.
func flagValue(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// storedMode is the chat's stored permission mode, "" when it has no
// record at all.
func (r *rig) storedMode(key state.ChatKey) string {
	r.t.Helper()
	c, err := r.store.GetChat(context.Background(), key)
	if errors.Is(err, state.ErrNotFound) {
		return ""
	}
	require.NoError(r.t, err)
	return c.PermissionMode
}

func (r *rig) storedChat(key state.ChatKey) state.Chat {
	r.t.Helper()
	c, err := r.store.GetChat(context.Background(), key)
	require.NoError(r.t, err)
	return c
}

// asksApproval sends a Bash prompt and reports that it needed an approval
// (denied here): the observable difference between bypassPermissions and
// the modes that ask.
func (r *rig) asksApproval(chat telegramtest.ChatID) {
	r.t.Helper()
	in := r.say(chat, alice, "BASHRUN please")
	ap := r.approvalMessage(chat, "echo hi > out.txt")
	r.tg.UserPresses(chat, ap.ID, buttonData(ap, "Deny"))
	r.finalAnswer(chat, in.ID, "The command ran.")
	assert.NoFileExists(r.t, r.claude.Workdir+"/out.txt")
}

const bypassRefused = "⛔ bypassPermissions is not allowed on this daemon (claude.allowed_modes)"

// repliesTo is the text of every bot message replying to msg, once the
// chat has handled what came after it (a /status round trip: the actor
// handles a chat's messages in order).
func (r *rig) repliesTo(chat telegramtest.ChatID, msg telegramtest.Message) []string {
	r.t.Helper()
	st := r.say(chat, alice, "/status")
	r.waitBot(chat, "status", func(m telegramtest.Message) bool { return m.ReplyTo == st.ID })
	var out []string
	for _, m := range r.tg.Messages(chat) {
		if m.FromBot && m.ReplyTo == msg.ID {
			out = append(out, m.Text)
		}
	}
	return out
}

func TestModeOutsideAllowedListIsRefused(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t)

	// No CLI yet: the refusal must not be remembered for the next start:
	// nothing is stored, and the next start has nothing to fall back from.
	md := r.say(chat, alice, "/mode bypassPermissions")
	r.waitBot(chat, "refusal", func(m telegramtest.Message) bool { return m.ReplyTo == md.ID && m.Text == bypassRefused })
	assert.Equal(t, []string{bypassRefused}, r.repliesTo(chat, md), "the refusal and nothing else")
	assert.Empty(t, r.storedMode(key), "nothing stored")
	r.asksApproval(chat)
	assert.Equal(t, "default", flagValue(r.cliArgs(key), "--permission-mode"))
	for _, m := range r.tg.Messages(chat) {
		assert.NotContains(t, m.Text, "is no longer allowed", "no stored mode to drop at the start")
	}

	// A live CLI: nothing is sent to it either (TestRefusedModeNeverReachesTheCLI
	// watches its stdin), so no attempt fails there.
	md = r.say(chat, alice, "/mode bypassPermissions")
	r.waitBot(chat, "refusal", func(m telegramtest.Message) bool { return m.ReplyTo == md.ID && m.Text == bypassRefused })
	assert.Equal(t, []string{bypassRefused}, r.repliesTo(chat, md), "the refusal and nothing else")
	r.asksApproval(chat)
	assert.Empty(t, r.storedChat(key).PermissionMode, "nothing stored")

	// A mode that exists but is not listed is refused the same way.
	r.stop()
	r.mutate = func(c *config.Config) { c.Claude.AllowedModes = []config.PermissionMode{config.PermissionDefault} }
	r.start()
	md = r.say(chat, alice, "/mode acceptEdits")
	r.waitBot(chat, "refusal", func(m telegramtest.Message) bool {
		return m.ReplyTo == md.ID && m.Text == "⛔ acceptEdits is not allowed on this daemon (claude.allowed_modes)"
	})
}

func TestModeMenuShowsAllowedModes(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t)
	in := r.say(chat, alice, "hello")
	r.finalAnswer(chat, in.ID, "echo: hello")

	md := r.say(chat, alice, "/mode")
	menu := r.waitBot(chat, "mode menu", func(m telegramtest.Message) bool { return m.ReplyTo == md.ID && len(m.Keyboard) > 0 })
	var labels []string
	for _, row := range menu.Keyboard {
		for _, b := range row {
			labels = append(labels, b.Text)
			assert.LessOrEqual(t, len(b.CallbackData), 64)
		}
	}
	assert.Equal(t, []string{"✅ default", "acceptEdits", "plan", "dontAsk"}, labels, "allowed modes only, the current one marked")

	r.tg.UserPresses(chat, menu.ID, buttonData(menu, "plan"))
	r.waitBot(chat, "menu answered", func(m telegramtest.Message) bool {
		return m.ID == menu.ID && len(m.Keyboard) == 0 && m.Text == "Permission mode: plan"
	})
	assert.Equal(t, "plan", r.storedChat(key).PermissionMode)
	// A newer menu expires the older one.
	md2 := r.say(chat, alice, "/mode")
	menu2 := r.waitBot(chat, "second menu", func(m telegramtest.Message) bool { return m.ReplyTo == md2.ID && len(m.Keyboard) > 0 })
	assert.NotEmpty(t, buttonData(menu2, "✅ plan"), "the current mode is marked")
	md3 := r.say(chat, alice, "/mode")
	r.waitBot(chat, "third menu", func(m telegramtest.Message) bool { return m.ReplyTo == md3.ID && len(m.Keyboard) > 0 })
	q, err := r.tg.TryUserPresses(chat, telegramtest.User{ID: alice, FirstName: "Alice"}, menu2.ID, buttonData(menu2, "dontAsk"))
	require.NoError(t, err)
	r.tg.WaitFor(wait, func(sn *telegramtest.Snapshot) bool {
		return slices.ContainsFunc(sn.CallbackAnswers, func(a telegramtest.CallbackAnswer) bool { return a.QueryID == q && strings.Contains(a.Text, "expired") })
	})

	// The choice is the chat's: a fresh session starts in it.
	nw := r.say(chat, alice, "/new")
	r.waitBot(chat, "new session", func(m telegramtest.Message) bool { return m.ReplyTo == nw.ID })
	again := r.say(chat, alice, "hello again")
	r.finalAnswer(chat, again.ID, "echo: hello again")
	assert.Equal(t, "plan", flagValue(r.cliArgs(key), "--permission-mode"))
}

func TestStoredModeNoLongerAllowedFallsBack(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withConfig(func(c *config.Config) {
		c.Claude.AllowedModes = append(c.Claude.AllowedModes, config.PermissionBypass)
	}))
	md := r.say(chat, alice, "/mode bypassPermissions")
	r.waitBot(chat, "switched", func(m telegramtest.Message) bool {
		return m.ReplyTo == md.ID && m.Text == "Permission mode: bypassPermissions"
	})
	assert.Equal(t, "bypassPermissions", r.storedChat(key).PermissionMode)

	r.stop()
	r.mutate = nil // the default allowed_modes: no bypass
	r.start()
	in := r.say(chat, alice, "hello")
	r.waitBot(chat, "notice", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "bypassPermissions is no longer allowed") && strings.Contains(m.Text, "Claude runs in default")
	})
	r.finalAnswer(chat, in.ID, "echo: hello")
	assert.Equal(t, "default", flagValue(r.cliArgs(key), "--permission-mode"))
	assert.Empty(t, r.storedChat(key).PermissionMode, "the stale choice is dropped")
}

// TestCLIModeSwitchOutsideListIsReverted: an approved plan makes the CLI
// switch itself to default; on a daemon that allows only plan, that is
// switched back.
func TestCLIModeSwitchOutsideListIsReverted(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withConfig(func(c *config.Config) {
		c.Claude.PermissionMode = config.PermissionPlan
		c.Claude.AllowedModes = []config.PermissionMode{config.PermissionPlan}
	}))
	in := r.say(chat, alice, "PLANIT add a button")
	plan := r.approvalMessage(chat, "Add a button")
	r.tg.UserPresses(chat, plan.ID, buttonData(plan, "Approve plan"))
	r.waitBot(chat, "revert notice", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "Claude switched to default, which is not allowed") && strings.Contains(m.Text, "switching back to plan")
	})
	r.finalAnswer(chat, in.ID, "Plan approved")
	st := r.say(chat, alice, "/status")
	status := r.waitBot(chat, "status", func(m telegramtest.Message) bool { return m.ReplyTo == st.ID })
	assert.Contains(t, status.Text, "Mode: plan")
	assert.Empty(t, r.storedChat(key).PermissionMode)
	// Not only untether's bookkeeping: the CLI itself is in plan mode again,
	// as it tells the model in its next request.
	r.ask(chat, "after the revert")
	assert.True(t, mentions(r.callFor("after the revert"), "Re-entering Plan Mode"), "the CLI is back in plan mode")
}

// mentions reports whether a model call carries text anywhere: the system
// prompt or any block of any message (the CLI's reminders included).
func mentions(call fakeapi.Request, text string) bool {
	if strings.Contains(call.System(), text) {
		return true
	}
	for _, m := range call.Messages() {
		if strings.Contains(m.Content.Text(), text) {
			return true
		}
		for _, b := range m.Content {
			if strings.Contains(b.Text, text) || strings.Contains(b.Content.Text(), text) {
				return true
			}
		}
	}
	return false
}

// withModeLog runs the fake CLI (fakecli_test.go), which logs the control
// requests it receives and the modes it is in to the returned file.
func withModeLog(t *testing.T, mutate func(*config.Config)) (rigOption, string) {
	log := filepath.Join(t.TempDir(), "cli.log")
	return withConfig(func(c *config.Config) {
		useFakeCLI(c)
		c.Claude.Env[envFakeCLILog] = log
		mutate(c)
	}), log
}

// cliLog is what the fake CLIs logged, line by line, but the reads that
// change nothing (get_settings: the effort module asks what a process
// applies when a turn starts).
func cliLog(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if !strings.HasPrefix(l, "control get_settings") {
			lines = append(lines, l)
		}
	}
	return lines
}

// What the live CLI receives when a mode is refused: nothing. An allowed
// switch, for comparison, reaches it (and the CLI is in that mode).
func TestRefusedModeNeverReachesTheCLI(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	opt, log := withModeLog(t, func(*config.Config) {})
	r := newRig(t, opt)
	r.ask(chat, "hello") // a live CLI
	for _, refused := range []string{"bypassPermissions", "manual"} {
		md := r.say(chat, alice, "/mode "+refused)
		r.waitBot(chat, "refusal", func(m telegramtest.Message) bool { return m.ReplyTo == md.ID })
		for _, reply := range r.repliesTo(chat, md) {
			assert.False(t, strings.HasPrefix(reply, "Permission mode:"), "refused: %s", reply)
		}
	}
	assert.NotContains(t, strings.Join(cliLog(t, log), "\n"), "set_permission_mode", "no refused mode was sent to the CLI")

	md := r.say(chat, alice, "/mode plan")
	r.waitBot(chat, "switched", func(m telegramtest.Message) bool { return m.ReplyTo == md.ID && m.Text == "Permission mode: plan" })
	lines := cliLog(t, log)
	assert.Contains(t, lines, "control set_permission_mode plan", "an allowed switch does reach it")
	assert.Equal(t, "mode plan", lines[len(lines)-1])
}

// A switch the CLI makes by itself to a mode the operator does not allow
// is undone in the CLI: it gets set_permission_mode back to the allowed
// mode, and that is the mode it ends in.
func TestCLIModeSwitchOutsideListIsUndoneInTheCLI(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	opt, log := withModeLog(t, func(c *config.Config) {
		c.Claude.PermissionMode = config.PermissionPlan
		c.Claude.AllowedModes = []config.PermissionMode{config.PermissionPlan, config.PermissionDefault}
	})
	r := newRig(t, opt)
	in := r.say(chat, alice, "SWITCH bypassPermissions")
	r.finalAnswer(chat, in.ID, "echo: SWITCH bypassPermissions")
	r.waitBot(chat, "revert notice", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "Claude switched to bypassPermissions, which is not allowed") && strings.Contains(m.Text, "switching back to plan")
	})
	require.Eventually(t, func() bool {
		lines := cliLog(t, log)
		return lines[len(lines)-1] == "mode plan"
	}, wait, 20*time.Millisecond, "the CLI ends in plan mode")
	assert.Equal(t, []string{"mode plan", "mode bypassPermissions", "control set_permission_mode plan", "mode plan"}, cliLog(t, log))

	// A switch within the allowed modes is kept: nothing is sent back.
	in = r.say(chat, alice, "SWITCH default")
	r.finalAnswer(chat, in.ID, "echo: SWITCH default")
	st := r.say(chat, alice, "/status")
	status := r.waitBot(chat, "status", func(m telegramtest.Message) bool { return m.ReplyTo == st.ID })
	assert.Contains(t, status.Text, "Mode: default")
	lines := cliLog(t, log)
	assert.Equal(t, "mode default", lines[len(lines)-1])
	assert.Equal(t, 1, strings.Count(strings.Join(lines, "\n"), "set_permission_mode"))
}

// TestAlwaysAllowNeverOffersADisallowedMode: Write asks with a "setMode
// acceptEdits" suggestion; where acceptEdits is not allowed there is no
// button for it, and allowing once leaves the next write asking.
func TestAlwaysAllowNeverOffersADisallowedMode(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withTrustScript(), withConfig(func(c *config.Config) {
		c.Claude.AllowedModes = []config.PermissionMode{config.PermissionDefault, config.PermissionPlan}
	}))
	in := r.say(chat, alice, "WRITEONE please")
	ap := r.approvalMessage(chat, "one.txt")
	assert.Empty(t, buttonData(ap, "🔓"), "no button for a mode the operator does not allow")
	r.tg.UserPresses(chat, ap.ID, buttonData(ap, "Approve"))
	r.finalAnswer(chat, in.ID, "Wrote one.")
	assert.FileExists(t, r.claude.Workdir+"/one.txt")
	in2 := r.say(chat, alice, "WRITETWO please")
	ap2 := r.approvalMessage(chat, "two.txt")
	r.tg.UserPresses(chat, ap2.ID, buttonData(ap2, "Deny"))
	r.finalAnswer(chat, in2.ID, "Wrote two.")
	assert.NoFileExists(t, r.claude.Workdir+"/two.txt")
}

// TestAlwaysAllowModeBecomesTheChatsMode: an "always allow" that switches
// to acceptEdits is the chat's mode from then on, also for the next CLI.
func TestAlwaysAllowModeBecomesTheChatsMode(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withTrustScript())
	in := r.say(chat, alice, "WRITEONE please")
	ap := r.approvalMessage(chat, "one.txt")
	always := buttonData(ap, "Accept edits")
	require.NotEmpty(t, always, "Write offers setMode acceptEdits")
	r.tg.UserPresses(chat, ap.ID, always)
	r.finalAnswer(chat, in.ID, "Wrote one.")
	in2 := r.say(chat, alice, "WRITETWO please")
	r.finalAnswer(chat, in2.ID, "Wrote two.")
	assert.FileExists(t, r.claude.Workdir+"/two.txt", "written without asking")
	assert.Equal(t, "acceptEdits", r.storedChat(key).PermissionMode)

	r.stop()
	r.start()
	in3 := r.say(chat, alice, "hello after the restart")
	r.finalAnswer(chat, in3.ID, "echo: hello after the restart")
	assert.Equal(t, "acceptEdits", flagValue(r.cliArgs(key), "--permission-mode"))
}
