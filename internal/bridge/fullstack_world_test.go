package bridge_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/telegramtest"
)

// The world changing under the daemon (issue 14 §4): the CLI binary
// removed, updated in place, the workdir deleted.

// TestMissingCLIIsExplainedAndFoundAgain: with the CLI binary gone the
// chat is told so, naming the path, and the bridge keeps running; the
// first message after the binary is back is answered.
func TestMissingCLIIsExplainedAndFoundAgain(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	link := filepath.Join(t.TempDir(), "claude")
	r := newRig(t, withClaude(), withConfig(func(c *config.Config) { c.Claude.Binary = link }))
	in := r.say(chat, alice, "hello while it is gone")
	gone := r.waitBot(chat, "the explanation", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "the Claude CLI is not at")
	})
	assert.Contains(t, gone.Text, link)
	assert.Contains(t, gone.Text, "Your message was not sent to Claude")
	select {
	case err := <-r.done:
		t.Fatalf("the bridge stopped: %v", err)
	default:
	}

	require.NoError(t, os.Symlink(r.claude.Binary, link)) // reinstalled
	in2 := r.say(chat, alice, "hello again")
	r.finalAnswer(chat, in2.ID, "echo: hello again")
}

// TestDeletedWorkdirIsNamedNotRecreated: a deleted project directory is
// named in the chat, for a text and for a file, and is not created again.
func TestDeletedWorkdirIsNamedNotRecreated(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	dir := filepath.Join(t.TempDir(), "project")
	require.NoError(t, os.Mkdir(dir, 0o700))
	r := newRig(t, withClaude(), withConfig(func(c *config.Config) { c.Claude.Workdir = dir }))
	in := r.say(chat, alice, "first")
	r.finalAnswer(chat, in.ID, "echo: first")
	r.stop() // the live CLI keeps its cwd; a new start finds it gone
	require.NoError(t, os.RemoveAll(dir))
	r.start()

	in2 := r.say(chat, alice, "second")
	m := r.waitBot(chat, "the explanation", func(m telegramtest.Message) bool {
		return m.ReplyTo == in2.ID && strings.Contains(m.Text, "does not exist")
	})
	assert.Contains(t, m.Text, dir)
	assert.Contains(t, m.Text, "does not create the directory again")
	doc := r.tg.UserSendsDocument(chat, telegramtest.User{ID: alice, FirstName: "Alice"}, "notes.txt", "text/plain", []byte("hi"), "read this")
	r.waitBot(chat, "the upload's explanation", func(m telegramtest.Message) bool {
		return m.ReplyTo == doc.ID && strings.Contains(m.Text, dir)
	})
	assert.NoDirExists(t, dir, "nothing recreated the workdir")
}

// TestCLIUpdatedInPlace: a CLI replaced on disk while a turn runs (npm
// installs a new file under the same path) lets that turn finish on the
// old process, and the next process started runs the new file.
func TestCLIUpdatedInPlace(t *testing.T) {
	chat, other := telegramtest.ChatID(alice), telegramtest.ChatID(2000)
	dir := t.TempDir()
	bin, marks := filepath.Join(dir, "claude"), filepath.Join(dir, "starts")
	install := func(r *rig, version string) {
		t.Helper()
		// `claude auth status` (the login module asks at start) is not a
		// CLI serving a chat: only those are counted.
		script := "#!/bin/sh\n[ \"$1\" = auth ] || echo " + version + " >> " + marks + "\nexec " + r.claude.Binary + " \"$@\"\n"
		tmp := bin + ".new"
		require.NoError(t, os.WriteFile(tmp, []byte(script), 0o755))
		require.NoError(t, os.Rename(tmp, bin)) // a new file under the old name, as npm does
	}
	r := newRig(t, withClaude(), withConfig(func(c *config.Config) { c.Claude.Binary = bin }))
	r.tg.AddChat(telegramtest.Chat{ID: other, Type: telegramtest.Private, FirstName: "Other"})
	install(r, "v1")

	in := r.say(chat, alice, "STEADY please")
	r.tg.WaitFor(wait, func(sn *telegramtest.Snapshot) bool { // the turn streams its answer
		for _, c := range sn.Calls {
			if (c.Method == "sendMessageDraft" || c.Method == "editMessageText") && c.OK() && strings.Contains(c.Params["text"], "steady words") {
				return true
			}
		}
		return false
	})
	install(r, "v2") // while the turn streams
	in2 := r.say(other, 2000, "quick one")
	r.finalAnswer(other, in2.ID, "echo: quick one")
	final := r.finalAnswer(chat, in.ID, "steady words")
	assert.Equal(t, 40, strings.Count(final.Text, "steady words"), "the running turn finished on the old process")
	got, err := os.ReadFile(marks)
	require.NoError(t, err)
	assert.Equal(t, "v1\nv2\n", string(got), "the old file started the first CLI, the new one the next")
}
