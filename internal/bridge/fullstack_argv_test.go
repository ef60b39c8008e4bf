package bridge_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner"
	"github.com/untether/untether/internal/runner/sshtest"
	"github.com/untether/untether/internal/telegramtest"
)

// A session id and a model name are the values from outside the config
// that become arguments of the CLI. These tests put hostile ones where
// they come from (the state database, /model, a Resume button) and check
// the effect: nothing of them reaches the CLI's command line or the API,
// nothing hostile is stored, and the chat still works and is told.

// flagLike is an id or a model that, as its own argument, is a CLI flag.
const flagLike = "--dangerously-skip-permissions"

// withStored writes into the state database before the bridge starts.
func withStored(f func(context.Context, *state.Store) error) rigOption {
	return func(r *rig) {
		r.opened = func(s *state.Store) { require.NoError(r.t, f(context.Background(), s)) }
	}
}

// assertNeverSent checks that no argument of the chat's live CLI and no
// request the fake API saw contains s.
func (r *rig) assertNeverSent(key state.ChatKey, s string) {
	r.t.Helper()
	for _, a := range r.cliArgs(key) {
		assert.NotContains(r.t, a, s, "an argument of the CLI")
	}
	for _, req := range r.claude.API.Requests() {
		assert.False(r.t, bytes.Contains(req.Body, []byte(s)), "a request to the API contains %q", s)
	}
}

// TestStoredSessionIDThatIsNotAUUIDStartsFresh: a damaged (or planted)
// session id in the state database is never passed to the CLI: the chat
// is told, starts a new session, and the damaged id is forgotten.
func TestStoredSessionIDThatIsNotAUUIDStartsFresh(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withStored(func(ctx context.Context, s *state.Store) error {
		if err := s.PutChat(ctx, state.Chat{Key: key, SessionID: flagLike}); err != nil {
			return err
		}
		return s.NoteSession(ctx, key, "default", "", flagLike)
	}))
	in := r.say(chat, alice, "hello")
	r.waitBot(chat, "notice", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "The session this chat had in default cannot be resumed: its stored id is not a valid session id. Claude starts a new session.")
	})
	r.finalAnswer(chat, in.ID, "echo: hello")
	r.assertNeverSent(key, flagLike)
	sid := r.sessionOf(key)
	_, err := runner.ParseSessionID(sid)
	require.NoError(t, err, "the chat's new session is stored")
	assert.Contains(t, r.cliArgs(key), "--session-id="+sid, "a new session, not a resumed one")
	placed, err := r.store.ProjectSession(context.Background(), key, "default", "")
	require.NoError(t, err)
	assert.Equal(t, sid, placed, "the damaged id is gone from the project's record too")
}

// TestResumeButtonRefusesAStoredIDThatIsNotAUUID: a /sessions entry whose
// stored id is not a session id gets a Resume button like the others, and
// pressing it changes nothing.
func TestResumeButtonRefusesAStoredIDThatIsNotAUUID(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t)
	in := r.say(chat, alice, "REMEMBER fig")
	r.finalAnswer(chat, in.ID, "echo: REMEMBER fig")
	real, pid := r.sessionOf(key), r.b.ChatPID(key)
	ctx := context.Background()
	// Filed in the chat's history, then the place's session put back.
	require.NoError(t, r.store.NoteSession(ctx, key, "default", "", flagLike))
	require.NoError(t, r.store.NoteSession(ctx, key, "default", "", real))

	list := r.command(chat, "/sessions", "Sessions")
	var resume string
	for _, line := range strings.Split(list.Text, "\n") {
		if strings.Contains(line, "started elsewhere or without text") {
			resume = buttonData(list, "▶️ "+strings.TrimSuffix(strings.Fields(line)[0], "."))
		}
	}
	require.NotEmpty(t, resume, "the planted entry has a Resume button: %s", list.Text)
	r.tg.UserPresses(chat, list.ID, resume)
	r.waitBot(chat, "refused", func(m telegramtest.Message) bool {
		return m.ID == list.ID && m.Text == "⚠️ That session cannot be resumed: its stored id is not a valid session id."
	})
	assert.Equal(t, real, r.sessionOf(key), "the chat keeps its session")
	assert.Equal(t, pid, r.b.ChatPID(key), "and its CLI")
	again := r.say(chat, alice, "still there?")
	r.finalAnswer(chat, again.ID, "echo: still there?")
	assert.True(t, r.callFor("still there?").AnyUserContains("REMEMBER fig"), "the same conversation")
	r.assertNeverSent(key, flagLike)
}

// TestModelThatIsNotAModelNameIsRefused: /model refuses a name that is not
// a model name, saying why, before a CLI starts and while one runs; nothing
// is stored, the live CLI is not asked, and no later start gets it.
func TestModelThatIsNotAModelNameIsRefused(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	pwned := filepath.Join(t.TempDir(), "pwned")
	hostile := []string{"x';touch " + pwned + ";'", "x';touch${IFS}" + pwned + ";'", flagLike, `x\';touch`}
	r := newRig(t)
	refuse := func(name string) {
		t.Helper()
		md := r.say(chat, alice, "/model "+name)
		refusal := r.waitBot(chat, "refusal", func(m telegramtest.Message) bool { return m.ReplyTo == md.ID })
		assert.Contains(t, refusal.Text, "is not a model name: a model name is letters, digits and . _ - : / @ [ ]")
		assert.Contains(t, refusal.Text, "Still on the CLI's default.")
		rec, err := r.store.GetChat(context.Background(), key)
		if !errors.Is(err, state.ErrNotFound) {
			require.NoError(t, err)
		}
		assert.Empty(t, rec.Model, "nothing stored")
	}
	// No CLI yet: the choice would only be recorded for the next start.
	for _, name := range hostile {
		refuse(name)
	}
	in := r.say(chat, alice, "hello")
	r.finalAnswer(chat, in.ID, "echo: hello")
	configured := r.lastModel("hello")
	// A live CLI: it would be asked to switch.
	pid := r.b.ChatPID(key)
	for _, name := range hostile {
		refuse(name)
	}
	again := r.say(chat, alice, "and now?")
	r.finalAnswer(chat, again.ID, "echo: and now?")
	assert.Equal(t, configured, r.lastModel("and now?"), "still the configured model")
	assert.Equal(t, pid, r.b.ChatPID(key), "the CLI was not restarted")
	for _, name := range hostile {
		r.assertNeverSent(key, name)
	}
	assert.NoFileExists(t, pwned)
}

// TestStoredModelThatIsNotAModelNameIsDropped: a chat's model choice in the
// state database that is not a model name (stored before names were
// checked, or planted) is never passed to the CLI: the chat starts on the
// configured model, is told, and the choice is forgotten.
func TestStoredModelThatIsNotAModelNameIsDropped(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	r := newRig(t, withStored(func(ctx context.Context, s *state.Store) error {
		return s.PutChat(ctx, state.Chat{Key: key, Model: flagLike})
	}))
	in := r.say(chat, alice, "hello")
	r.waitBot(chat, "notice", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "This chat's chosen model "+flagLike+" is not a model name, so Claude starts on the CLI's default.")
	})
	r.finalAnswer(chat, in.ID, "echo: hello")
	r.assertNeverSent(key, flagLike)
	assert.Empty(t, r.storedChat(key).Model)
	for _, a := range r.cliArgs(key) {
		assert.False(t, strings.HasPrefix(a, "--model"), "the CLI's default model: %q", a)
	}
}

// TestRemoteProjectKeepsChatValuesOffTheSSHCommandLine: a project on a host
// whose login shell reads command lines as fish does. /model refuses a
// name built to break out of quoting, takes a real one, and the answer
// comes from the CLI over there with the model and the session on its
// command line, while the local ssh's command line is the constant one:
// no model, session id, directory or anything else of the chat's on it.
func TestRemoteProjectKeepsChatValuesOffTheSSHCommandLine(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	srv := sshtest.Start(t, sshtest.FishLike())
	far := realDir(t)
	pwned := filepath.Join(t.TempDir(), "pwned")
	r := newRig(t, withProjects(map[string]config.Project{
		"far": {Path: far, Host: srv.Host, SSHOptions: srv.Options},
	}, func(c *config.Config) { c.Telegram.DefaultProject = "far" }))

	for _, name := range []string{"x';touch " + pwned + ";'", `x\';touch${IFS}` + pwned + `;#`} {
		md := r.say(chat, alice, "/model "+name)
		refusal := r.waitBot(chat, "refusal", func(m telegramtest.Message) bool { return m.ReplyTo == md.ID })
		assert.Contains(t, refusal.Text, "is not a model name")
	}
	r.command(chat, "/model claude-sonnet-4-5", "Model: claude-sonnet-4-5")
	r.ask(chat, "hello far away")
	assert.True(t, ranIn(r.callFor("hello far away"), far))
	assert.Equal(t, "claude-sonnet-4-5", r.lastModel("hello far away"))
	session := r.sessionOf(key)

	args := r.cliArgs(key) // the local ssh
	require.True(t, strings.HasSuffix(args[0], "ssh"), "%q", args)
	want := append(append([]string{"-T", "-o", "BatchMode=yes"}, srv.Options...), srv.Host, "--")
	require.Equal(t, want, args[1:len(args)-1])
	command := args[len(args)-1]
	assert.True(t, strings.HasPrefix(command, "sh -c '") && strings.HasSuffix(command, "' untether"), "%q", command)
	for _, v := range []string{"sonnet", session, far, r.claude.Binary, "pwned", "--model", "--session-id", "--resume"} {
		assert.NotContains(t, command, v, "the command ssh runs")
	}
	pid, _ := remoteCLI(t, r.claude.Binary, session)
	require.NotZero(t, pid, "the CLI runs on the other host")
	remote, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	require.NoError(t, err)
	assert.Contains(t, strings.Split(string(remote), "\x00"), "--model=claude-sonnet-4-5")
	assert.Contains(t, strings.Split(string(remote), "\x00"), "--session-id="+session)
	assert.NoFileExists(t, pwned)
}
