package bridge_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/telegramtest"
)

// untether's own folders are no way in (issue 22): Claude's tools can
// write .untether/outbox, sent and uploads, so what is found there is
// never trusted, and nothing is read through a path twice.

const sentRel = ".untether/sent"

// mkfifo makes a FIFO at rel and, when the test ends, opens it for writing
// once, so that a reader stuck on it (the bug a test is about) lets go.
func (r *rig) mkfifo(rel string) {
	r.t.Helper()
	p := filepath.Join(r.claude.Workdir, rel)
	require.NoError(r.t, os.MkdirAll(filepath.Dir(p), 0o700))
	require.NoError(r.t, syscall.Mkfifo(p, 0o600))
	r.t.Cleanup(func() {
		if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
}

// waitSent waits for a file in .untether/sent whose name ends with suffix
// and returns its path relative to the workdir.
func (r *rig) waitSent(suffix string) string {
	r.t.Helper()
	var found string
	require.Eventually(r.t, func() bool {
		for _, n := range r.dirNames(sentRel) {
			if strings.HasSuffix(n, suffix) {
				found = sentRel + "/" + n
				return true
			}
		}
		return false
	}, wait, 5*time.Millisecond, "a file *%s in %s", suffix, sentRel)
	return found
}

// holdUploads makes Telegram refuse every upload with a 429 until the
// returned function is called, so the outbox retries them: a retry that
// opened its file again would find whatever a tool put there meanwhile.
func (r *rig) holdUploads() (release func()) {
	r.t.Helper()
	uploads := func(sn *telegramtest.Snapshot) int {
		return len(sn.CallsOf("sendDocument")) + len(sn.CallsOf("sendMediaGroup"))
	}
	calls := uploads(r.tg.Snapshot())
	stop := r.tg.FailWhen(func(c telegramtest.Call) bool { return c.Method == "sendDocument" || c.Method == "sendMediaGroup" },
		telegramtest.Fault{Code: 429, RetryAfter: 1})
	return func() {
		r.t.Helper()
		// A refused attempt was made: the file was open before the swap
		// and is read again after it.
		r.tg.WaitFor(wait, func(sn *telegramtest.Snapshot) bool { return uploads(sn) > calls })
		stop()
	}
}

// swapForFIFO replaces the file at rel with a FIFO, as a background tool
// would; swapForLink with a link to the project's .env.
func (r *rig) swapForFIFO(rel string) {
	r.t.Helper()
	require.NoError(r.t, os.Remove(filepath.Join(r.claude.Workdir, rel)))
	r.mkfifo(rel)
}

func (r *rig) swapForLink(rel string) {
	r.t.Helper()
	p := filepath.Join(r.claude.Workdir, rel)
	require.NoError(r.t, os.Remove(p))
	require.NoError(r.t, os.Symlink("../../.env", p))
}

// TestFilesSwappedAfterTheCheckAreNotWhatIsSent (issue 22 §1): a tool
// swaps each new file in .untether/sent, while its upload is retried, for
// a FIFO or for a link to .env. What arrives is what was checked, the chat
// and the other chats go on, a restart with such a send still journaled
// does not wedge the chat, and the shutdown completes (rig.stop).
func TestFilesSwappedAfterTheCheckAreNotWhatIsSent(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withRules(fakeapi.ToolTurn("LONGWRITE", "Write", map[string]any{
		"file_path": "{{cwd}}/generated.txt", "content": longContent(45)}, "Written.")))
	r.writeFile(".env", []byte("SECRET=swapped-in"))
	other := telegramtest.ChatID(2000)
	r.tg.AddChat(telegramtest.Chat{ID: other, Type: telegramtest.Private, FirstName: "Other"})
	// outboxSwapped has Claude leave name in its outbox; once the file is
	// in .untether/sent, swap replaces it while its upload is refused. It
	// returns the document that arrived, which must be what was checked.
	outboxSwapped := func(name, content string, swap func(string)) telegramtest.Message {
		t.Helper()
		r.writeFile(aliceOutbox+"/"+name, []byte(content))
		release := r.holdUploads()
		in := r.say(chat, alice, "send "+name)
		r.finalAnswer(chat, in.ID, "echo: send "+name)
		swap(r.waitSent("-" + name))
		release()
		return r.waitBot(chat, name, func(m telegramtest.Message) bool { return m.Document != nil && string(m.Document.Data) == content })
	}

	// Each step: a file is checked and its upload refused once with a
	// 429; meanwhile the "tool" swaps the name in .untether/sent; the
	// retry must send what was checked.
	steps := []struct {
		name string
		run  func()
	}{
		{"outbox file becomes a FIFO", func() {
			outboxSwapped("report.txt", "the checked report", r.swapForFIFO)
			r.sync("still answering after the FIFO")
			o := r.say(other, telegramtest.UserID(other), "and the other chat")
			r.finalAnswer(other, o.ID, "echo: and the other chat")
		}},
		{"outbox file becomes a link to .env", func() {
			doc := outboxSwapped("notes.txt", "the checked notes", r.swapForLink)
			assert.Equal(t, "notes.txt", doc.Document.FileName)
		}},
		{"zip becomes a FIFO", func() {
			r.writeFile("docs/a.md", []byte("# a"))
			release := r.holdUploads()
			in := r.say(chat, alice, "/get docs")
			r.swapForFIFO(r.waitSent("-docs.zip"))
			release()
			doc := r.waitBot(chat, "the zip", func(m telegramtest.Message) bool { return m.ReplyTo == in.ID && m.Document != nil })
			zr, err := zip.NewReader(bytes.NewReader(doc.Document.Data), int64(len(doc.Document.Data)))
			require.NoError(t, err, "the zip written, not what replaced it")
			require.Len(t, zr.File, 1)
			assert.Equal(t, "docs/a.md", zr.File[0].Name)
		}},
		{"full diff becomes a link to .env", func() {
			in := r.say(chat, alice, "LONGWRITE please")
			ap := r.approvalMessage(chat, "generated.txt")
			release := r.holdUploads()
			r.tg.UserPresses(chat, ap.ID, buttonData(ap, "Full diff"))
			r.swapForLink(r.waitSent("-generated.txt.diff"))
			release()
			doc := r.waitBot(chat, "the diff", func(m telegramtest.Message) bool { return m.ReplyTo == ap.ID && m.Document != nil })
			assert.Equal(t, 45, strings.Count(string(doc.Document.Data), "\n+ line number"))
			m, _ := r.tg.Snapshot().Message(chat, ap.ID)
			r.tg.UserPresses(chat, ap.ID, buttonData(m, "Approve"))
			r.finalAnswer(chat, in.ID, "Written.")
		}},
		{"a journaled send replayed after a crash finds a FIFO", func() {
			r.writeFile(aliceOutbox+"/plan.txt", []byte("the checked plan"))
			stop := r.tg.FailWhen(func(c telegramtest.Call) bool { return c.Method == "sendDocument" }, telegramtest.Fault{Code: 429, RetryAfter: 1})
			r.say(chat, alice, "send the plan")
			r.swapForFIFO(r.waitSent("-plan.txt")) // journaled before the move, so the journal names it
			r.crash()
			stop()
			r.start()
			r.sync("answering after the restart")
			o := r.say(other, telegramtest.UserID(other), "the other chat after the restart")
			r.finalAnswer(other, o.ID, "echo: the other chat after the restart")
		}},
	}
	for _, s := range steps {
		t.Log("step:", s.name)
		s.run()
	}
	for _, m := range r.tg.Snapshot().BotMessages(chat) {
		if m.Document != nil {
			assert.NotContains(t, string(m.Document.Data), "SECRET", "%s", m.Document.FileName)
		}
	}
}

// TestLinkedOutboxSendsAndMovesNothing (issue 22 §5): a chat's outbox
// linked to the project root sends nothing (.env included) and moves
// nothing (.git and src stay); the chat is told once. A linked sent
// directory stops the delivery the same way, leaving the files where they
// are.
func TestLinkedOutboxSendsAndMovesNothing(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	r.writeFile(".env", []byte("API_KEY=root-secret"))
	r.writeFile(".git/HEAD", []byte("ref: refs/heads/main"))
	r.writeFile("src/main.go", []byte("package main"))
	r.writeFile("README.md", []byte("# project"))
	require.NoError(t, os.MkdirAll(filepath.Join(r.claude.Workdir, ".untether/outbox"), 0o700))
	require.NoError(t, os.Symlink("../..", filepath.Join(r.claude.Workdir, aliceOutbox)))
	before := r.dirNames(".")
	notices := func() int {
		n := 0
		for _, m := range r.tg.Snapshot().BotMessages(chat) {
			if strings.Contains(m.Text, "are not sent") && strings.Contains(m.Text, "is a symbolic link") {
				n++
			}
		}
		return n
	}
	in := r.say(chat, alice, "first turn")
	r.finalAnswer(chat, in.ID, "echo: first turn")
	notice := r.waitBot(chat, "the refusal", func(m telegramtest.Message) bool { return strings.Contains(m.Text, "are not sent") })
	assert.Contains(t, notice.Text, filepath.Join(r.claude.Workdir, aliceOutbox)+" is a symbolic link")
	r.sync("second turn")
	assert.Equal(t, 1, notices(), "told once")
	assert.Empty(t, r.tg.Snapshot().Documents(), "nothing sent, .env least of all")
	assert.Equal(t, before, r.dirNames("."), "nothing moved out of the project")
	assert.Empty(t, r.dirNames(sentRel))
	assert.Len(t, r.logLines("Refused one of untether's own directories"), 1, "logged once")

	// Now the outbox is real, but sent/ leads back into the project.
	require.NoError(t, os.Remove(filepath.Join(r.claude.Workdir, aliceOutbox)))
	r.writeFile(aliceOutbox+"/report.txt", []byte("report"))
	require.NoError(t, os.Symlink("..", filepath.Join(r.claude.Workdir, sentRel)))
	in = r.say(chat, alice, "third turn")
	r.finalAnswer(chat, in.ID, "echo: third turn")
	r.waitBot(chat, "the refusal of sent/", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, filepath.Join(r.claude.Workdir, sentRel)+" is a symbolic link")
	})
	assert.Equal(t, []string{"report.txt"}, r.dirNames(aliceOutbox), "left where it is")
	assert.Empty(t, r.tg.Snapshot().Documents())
	assert.NotContains(t, r.dirNames("."), "report.txt", "not moved into the project through the link")
}

// TestLinkedUploadsPruneNothingAtStart (issue 22 §4): with
// .untether/uploads linked to the project root, the pruner at start
// deletes no project file, and an upload is refused instead of being
// written into the project.
func TestLinkedUploadsPruneNothingAtStart(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withConfig(func(c *config.Config) { c.Files.Keep = config.Duration(time.Hour) }))
	<-r.ready
	r.stop()
	r.writeFile("main.go", []byte("package main"))
	r.writeFile("docs/old.md", []byte("# old"))
	long := time.Now().Add(-1000 * time.Hour)
	for _, f := range []string{"main.go", "docs/old.md"} {
		require.NoError(t, os.Chtimes(filepath.Join(r.claude.Workdir, f), long, long))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(r.claude.Workdir, ".untether"), 0o700))
	require.NoError(t, os.Symlink("..", filepath.Join(r.claude.Workdir, ".untether/uploads")))
	r.start()
	<-r.ready
	require.Eventually(t, func() bool { return len(r.logLines("Refused one of untether's own directories")) == 1 }, wait, 10*time.Millisecond,
		"the pruner refused the link")
	assert.FileExists(t, filepath.Join(r.claude.Workdir, "main.go"))
	assert.FileExists(t, filepath.Join(r.claude.Workdir, "docs/old.md"))

	before := r.dirNames(".")
	doc := r.sendDoc("upload.txt", []byte("uploaded"), "keep this")
	r.waitBot(chat, "the refusal", func(m telegramtest.Message) bool {
		return m.ReplyTo == doc.ID && strings.Contains(m.Text, "is a symbolic link")
	})
	assert.Equal(t, before, r.dirNames("."), "nothing written into the project")
}

// TestGetRefusesUntetherFiles (issue 22 §9): /get never sends untether's
// own files, such as what was sent to another chat of the project.
func TestGetRefusesUntetherFiles(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	r.writeFile(sentRel+"/20260101-000000-bobs-report.txt", []byte("for another chat"))
	r.writeFile(".untether/uploads/20260101-000000-bobs-upload.txt", []byte("another chat's upload"))
	for _, arg := range []string{sentRel + "/20260101-000000-bobs-report.txt", ".untether/uploads/20260101-000000-bobs-upload.txt",
		sentRel, ".untether", filepath.Join(r.claude.Workdir, sentRel+"/20260101-000000-bobs-report.txt")} {
		in := r.say(chat, alice, "/get "+arg)
		r.waitBot(chat, "refusal of "+arg, func(m telegramtest.Message) bool {
			return m.ReplyTo == in.ID && strings.Contains(m.Text, "untether's own files")
		})
	}
	assert.Empty(t, r.tg.Snapshot().Documents())
}

// TestOutboxFloodIsOneMessage (issue 22 §10): thousands of files in the
// outbox give at most [files] max_files_per_turn files and one message
// about the rest, and the next answer comes right after.
func TestOutboxFloodIsOneMessage(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withConfig(func(c *config.Config) { c.Files.MaxFilesPerTurn = 5 }))
	dir := filepath.Join(r.claude.Workdir, aliceOutbox)
	require.NoError(t, os.MkdirAll(dir, 0o700))
	for i := range 3000 {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "empty-"+leftPad(i)), nil, 0o600))
	}
	for i := range 12 {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "file-"+leftPad(i)+".txt"), []byte("file "+leftPad(i)), 0o600))
	}
	in := r.say(chat, alice, "flood")
	answer := r.finalAnswer(chat, in.ID, "echo: flood")
	notice := r.waitBot(chat, "the summary", func(m telegramtest.Message) bool { return strings.HasPrefix(m.Text, "📎 Not sent") })
	next := r.say(chat, alice, "next question")
	r.finalAnswer(chat, next.ID, "echo: next question")

	var docs, notices int
	for _, m := range r.tg.Snapshot().BotMessages(chat) {
		switch {
		case m.Document != nil:
			docs++
		case strings.Contains(m.Text, "empty"): // the summary, or a piece of a split one
			notices++
		}
	}
	assert.Equal(t, 5, docs, "[files] max_files_per_turn files sent")
	assert.Equal(t, 1, notices, "one message about the rest")
	assert.Contains(t, notice.Text, "…and 2997 more: 2990 empty, 7 over the 5 files sent a turn ([files] max_files_per_turn)")
	assert.Less(t, answer.ID, notice.ID)
	assert.Empty(t, r.dirNames(aliceOutbox), "every file moved to sent/")
	assert.Len(t, r.dirNames(sentRel), 3012)
}

func leftPad(i int) string { return fmt.Sprintf("%04d", i) }

// TestOneZipAtATimePerChat (issue 22 §12): while a chat's zip is being
// made, another /get of a directory is answered, not started.
func TestOneZipAtATimePerChat(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	r.writeFile("docs/a.md", []byte("# a"))
	release := bridge.HoldZips()
	first := r.say(chat, alice, "/get docs")
	r.waitSent("-docs.zip") // being written
	second := r.say(chat, alice, "/get docs")
	r.waitBot(chat, "the refusal", func(m telegramtest.Message) bool {
		return m.ReplyTo == second.ID && strings.Contains(m.Text, "still being zipped")
	})
	release()
	r.waitBot(chat, "the first zip", func(m telegramtest.Message) bool { return m.ReplyTo == first.ID && m.Document != nil })
	third := r.say(chat, alice, "/get docs")
	doc := r.waitBot(chat, "the next zip", func(m telegramtest.Message) bool { return m.ReplyTo == third.ID && m.Document != nil })
	zr, err := zip.NewReader(bytes.NewReader(doc.Document.Data), int64(len(doc.Document.Data)))
	require.NoError(t, err)
	rc, err := zr.File[0].Open()
	require.NoError(t, err)
	data, _ := io.ReadAll(rc)
	rc.Close()
	assert.Equal(t, "# a", string(data))
	assert.Len(t, r.tg.Snapshot().Documents(), 2)
}
