package bridge_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/telegramtest"
)

// hostileScript is what a hostile tool runs in one turn (through the real
// CLI's Bash tool): every .untether directory linked back to the project
// root, another chat's outbox filled with a thousand files and FIFOs, and
// a FIFO dropped through the linked outbox.
const hostileScript = `set -e
cd {{cwd}}/.untether
mkdir -p outbox/2001
ln -s ../.. outbox/1001
ln -s .. uploads
ln -s .. sent
for i in $(seq 1000); do echo "file $i" > outbox/2001/f$i.txt; done
mkfifo outbox/2001/pipe1 outbox/2001/pipe2 outbox/1001/pipe-through-the-link`

// TestHostileToolCannotUseUntetherDirs (issue 22): in one turn a tool
// links every .untether directory to the project root and drops FIFOs and
// a thousand files into an outbox. The chat, the other chats, the next
// restart and the shutdown all behave, and no project file is moved,
// deleted or sent.
func TestHostileToolCannotUseUntetherDirs(t *testing.T) {
	chat, filler, bystander := telegramtest.ChatID(alice), telegramtest.ChatID(2001), telegramtest.ChatID(2002)
	r := newRig(t, withConfig(func(c *config.Config) {
		c.Files.Keep = config.Duration(time.Hour)
		c.Files.OutboxKeep = config.Duration(time.Hour)
	}), withRules(fakeapi.ToolTurn("HOSTILE", "Bash", map[string]any{"command": hostileScript, "description": "Rearrange untether's folders"}, "The tool ran.")))
	for _, id := range []telegramtest.ChatID{filler, bystander} {
		r.tg.AddChat(telegramtest.Chat{ID: id, Type: telegramtest.Private, FirstName: "U"})
	}
	project := map[string]string{".env": "API_KEY=root-secret", ".git/HEAD": "ref: refs/heads/main", "src/main.go": "package main", "README.md": "# project"}
	old := time.Now().Add(-1000 * time.Hour)
	for rel, content := range project {
		r.writeFile(rel, []byte(content))
		require.NoError(t, os.Chtimes(filepath.Join(r.claude.Workdir, rel), old, old)) // what a pruner following the links would delete
	}
	require.NoError(t, os.MkdirAll(filepath.Join(r.claude.Workdir, ".untether"), 0o700))
	untouched := func(when string) {
		t.Helper()
		for rel, content := range project {
			got, err := os.ReadFile(filepath.Join(r.claude.Workdir, rel))
			require.NoError(t, err, "%s: %s was moved or deleted", when, rel)
			assert.Equal(t, content, string(got), "%s: %s", when, rel)
		}
		for _, m := range r.tg.Snapshot().Documents() {
			for rel, content := range project {
				assert.NotEqual(t, content, string(m.Document.Data), "%s: %s was sent", when, rel)
			}
		}
	}
	talk := func(id telegramtest.ChatID, text string) {
		t.Helper()
		in := r.say(id, telegramtest.UserID(id), text)
		r.finalAnswer(id, in.ID, "echo: "+text)
	}

	in := r.say(chat, alice, "HOSTILE please")
	ap := r.approvalMessage(chat, "Rearrange")
	r.tg.UserPresses(chat, ap.ID, buttonData(ap, "Approve"))
	r.finalAnswer(chat, in.ID, "The tool ran.")
	require.FileExists(t, filepath.Join(r.claude.Workdir, ".untether/outbox/2001/f1000.txt"), "the tool ran")
	r.waitBot(chat, "the refusal of the linked outbox", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "are not sent") && strings.Contains(m.Text, "is a symbolic link")
	})
	talk(chat, "still there?")
	talk(filler, "my outbox is full")
	r.waitBot(filler, "the refusal of the linked sent/", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, filepath.Join(r.claude.Workdir, ".untether/sent")+" is a symbolic link")
	})
	talk(bystander, "hello from a bystander")
	assert.Len(t, r.dirNames(".untether/outbox/2001"), 1002, "nothing moved through the linked sent/")
	untouched("after the hostile turn")

	r.stop()
	r.start() // the pruners run at start, with [files] keep of an hour
	<-r.ready
	require.Eventually(t, func() bool { return len(r.logLines("Refused one of untether's own directories")) >= 2 }, wait, 10*time.Millisecond)
	talk(chat, "after the restart")
	talk(filler, "after the restart too")
	talk(bystander, "and me")
	untouched("after the restart")

	// The operator removes the linked sent/ (the notice said where it
	// is); the full outbox is then delivered within bounds.
	require.NoError(t, os.Remove(filepath.Join(r.claude.Workdir, ".untether/sent")))
	talk(filler, "now send my files")
	notice := r.waitBot(filler, "the summary", func(m telegramtest.Message) bool { return strings.HasPrefix(m.Text, "📎 Not sent") })
	assert.Contains(t, notice.Text, "over the 20 files sent a turn")
	assert.Contains(t, notice.Text, "not regular files", "the FIFOs")
	talk(filler, "and after that")
	talk(chat, "and alice")
	var docs int
	for _, m := range r.tg.Snapshot().BotMessages(filler) {
		if m.Document != nil {
			docs++
			assert.True(t, strings.HasPrefix(string(m.Document.Data), "file "), "%q", m.Document.Data)
		}
	}
	assert.Equal(t, config.DefaultMaxFilesPerTurn, docs)
	assert.Len(t, r.tg.Snapshot().Documents(), docs, "no other chat got a file")
	untouched("at the end")
	// rig.stop, at cleanup, checks that the shutdown completes.
}
