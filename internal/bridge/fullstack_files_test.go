package bridge_test

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/telegramtest"
)

// Files back to the user: Claude's outbox, /get and the full diff.

// aliceOutbox is the outbox directory of Alice's private chat.
const aliceOutbox = ".untether/outbox/1001"

func (r *rig) writeFile(rel string, data []byte) {
	r.t.Helper()
	p := filepath.Join(r.claude.Workdir, rel)
	require.NoError(r.t, os.MkdirAll(filepath.Dir(p), 0o700))
	require.NoError(r.t, os.WriteFile(p, data, 0o600))
}

func (r *rig) dirNames(rel string) []string {
	r.t.Helper()
	entries, err := os.ReadDir(filepath.Join(r.claude.Workdir, rel))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(r.t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

func TestClaudeSendsAFileFromItsOutbox(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withConfig(func(c *config.Config) { c.Claude.PermissionMode = config.PermissionAcceptEdits }),
		withRules(fakeapi.ToolTurn("SENDREPORT", "Write", map[string]any{
			"file_path": "{{cwd}}/" + aliceOutbox + "/report.txt", "content": "quarterly numbers\n"}, "The report is on its way.")))
	in := r.say(chat, alice, "SENDREPORT please")
	r.finalAnswer(chat, in.ID, "The report is on its way.")
	doc := r.waitBot(chat, "the report as a document", func(m telegramtest.Message) bool { return m.Document != nil })
	assert.Equal(t, "report.txt", doc.Document.FileName)
	assert.Equal(t, "quarterly numbers\n", string(doc.Document.Data))
	assert.Equal(t, in.ID, doc.ReplyTo, "it answers the request")

	calls := r.claude.API.ModelCalls()
	require.NotEmpty(t, calls)
	assert.Contains(t, calls[0].System(), filepath.Join(r.claude.Workdir, aliceOutbox)+"/", "Claude was told where its outbox is")

	require.Eventually(t, func() bool { return len(r.dirNames(aliceOutbox)) == 0 }, wait, 20*time.Millisecond, "the outbox is emptied")
	sent := r.dirNames(".untether/sent")
	require.Len(t, sent, 1)
	assert.True(t, strings.HasSuffix(sent[0], "-report.txt"), sent[0])
	got, err := os.ReadFile(filepath.Join(r.claude.Workdir, ".untether/sent", sent[0]))
	require.NoError(t, err)
	assert.Equal(t, "quarterly numbers\n", string(got))

	// Nothing is sent twice: the next turn finds the outbox empty.
	r.sync("after the report")
	assert.Len(t, r.tg.Snapshot().Documents(), 1)
}

func TestOutboxPhotosGoAsOneAlbumAndSkippedFilesAreNamed(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	// Claude's Bash ran earlier in the turn (its approval is tested
	// elsewhere); what matters here is what the turn's end finds.
	r.writeFile(aliceOutbox+"/a-chart.png", noisePNG(t, 40, 30))
	r.writeFile(aliceOutbox+"/b-chart.png", noisePNG(t, 30, 40))
	r.writeFile(aliceOutbox+"/empty.txt", nil)
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(r.claude.Workdir, aliceOutbox, "link.txt")))
	in := r.say(chat, alice, "make two charts")
	r.finalAnswer(chat, in.ID, "echo: make two charts")
	photos := r.tg.WaitFor(wait, func(sn *telegramtest.Snapshot) bool { return len(sn.Photos()) == 2 }).Photos()
	assert.Equal(t, photos[0].MediaGroupID, photos[1].MediaGroupID, "one album")
	assert.NotEmpty(t, photos[0].MediaGroupID)
	assert.Equal(t, noisePNG(t, 40, 30), photos[0].PhotoData)
	assert.Equal(t, "a-chart.png", photos[0].Text)
	notice := r.waitBot(chat, "not sent", func(m telegramtest.Message) bool { return strings.HasPrefix(m.Text, "📎 Not sent") })
	assert.Contains(t, notice.Text, "empty.txt is empty")
	assert.Contains(t, notice.Text, "link.txt is a symbolic link")
	assert.NotContains(t, notice.Text, "root:", "the link was not followed")
	assert.Empty(t, r.tg.Snapshot().Documents())
	assert.Empty(t, r.dirNames(aliceOutbox))
}

func TestGetSendsProjectFilesAndRefusesSecrets(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	r.writeFile("notes/todo.txt", []byte("buy milk"))
	r.writeFile("notes/.env.local", []byte("TOKEN=notes-secret"))
	r.writeFile("notes/deep/plan.md", []byte("# plan"))
	r.writeFile(".env", []byte("API_KEY=root-secret"))
	r.writeFile("certs/server.pem", []byte("-----BEGIN PRIVATE KEY-----"))
	require.NoError(t, os.Symlink(".env", filepath.Join(r.claude.Workdir, "innocent.txt")))

	get := func(arg, want string) telegramtest.Message {
		t.Helper()
		in := r.say(chat, alice, "/get "+arg)
		return r.waitBot(chat, "answer to /get "+arg, func(m telegramtest.Message) bool {
			return m.ReplyTo == in.ID && strings.Contains(m.Text, want)
		})
	}
	doc := get("notes/todo.txt", "notes/todo.txt")
	require.NotNil(t, doc.Document)
	assert.Equal(t, "todo.txt", doc.Document.FileName)
	assert.Equal(t, "buy milk", string(doc.Document.Data))
	abs := get(filepath.Join(r.claude.Workdir, "notes/todo.txt"), "notes/todo.txt")
	require.NotNil(t, abs.Document, "an absolute path inside the project works too")

	get(".env", "🔒")
	get("certs/server.pem", "matches the [files] deny pattern *.pem")
	get("innocent.txt", "symbolic link")
	get("../../etc/passwd", "not inside the project")
	get("missing.txt", "No such file")

	zipped := get("notes", "as a zip")
	require.NotNil(t, zipped.Document)
	assert.Equal(t, "notes.zip", zipped.Document.FileName)
	assert.Contains(t, zipped.Text, "1 left out")
	zr, err := zip.NewReader(bytes.NewReader(zipped.Document.Data), int64(len(zipped.Document.Data)))
	require.NoError(t, err)
	files := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		data, err := io.ReadAll(rc)
		rc.Close()
		require.NoError(t, err)
		files[f.Name] = string(data)
	}
	assert.Equal(t, map[string]string{"notes/todo.txt": "buy milk", "notes/deep/plan.md": "# plan"}, files, "the denied .env.local is left out")

	for _, m := range r.tg.Snapshot().BotMessages(chat) {
		if m.Document != nil {
			assert.NotContains(t, string(m.Document.Data), "secret", "no secret was ever sent")
		}
		assert.NotContains(t, m.Text, "root-secret")
	}
	assert.False(t, r.modelSaw("/get"), "/get is the bot's, not Claude's")
}

func TestGetDirectoryWithoutZipDirs(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withConfig(func(c *config.Config) { c.Files.ZipDirs = false }))
	r.writeFile("src/main.go", []byte("package main"))
	in := r.say(chat, alice, "/get src")
	r.waitBot(chat, "refusal", func(m telegramtest.Message) bool {
		return m.ReplyTo == in.ID && strings.Contains(m.Text, "is a directory") && strings.Contains(m.Text, "zip_dirs")
	})
	assert.Empty(t, r.tg.Snapshot().Documents())
}

// longContent is a file of n numbered lines.
func longContent(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("line number ")
		b.WriteString(strings.Repeat("x", i%5))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString("\n")
	}
	return b.String()
}

// TestFullDiffAnswersAnApprovalWhoseSendIsUnanswered: on a slow link the
// user sees the approval, and presses 📄 Full diff, before the bot has the
// answer to the call that sent it. The diff still replies to the approval:
// the press says which message it came from.
func TestFullDiffAnswersAnApprovalWhoseSendIsUnanswered(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t, withRules(fakeapi.ToolTurn("LONGWRITE", "Write", map[string]any{
		"file_path": "{{cwd}}/generated.txt", "content": longContent(45)}, "Written.")))
	warm := r.say(chat, alice, "warm up")
	r.finalAnswer(chat, warm.ID, "echo: warm up")
	r.tg.DelayAnswer("sendMessage", 3*time.Second)
	in := r.say(chat, alice, "LONGWRITE please")
	ap := r.approvalMessage(chat, "generated.txt")
	r.tg.UserPresses(chat, ap.ID, buttonData(ap, "Full diff"))
	doc := r.waitBot(chat, "the diff", func(m telegramtest.Message) bool { return m.Document != nil })
	assert.Equal(t, ap.ID, doc.ReplyTo, "it answers the approval")
	r.tg.DelayAnswer("sendMessage", 0)
	m, _ := r.tg.Snapshot().Message(chat, ap.ID)
	r.tg.UserPresses(chat, ap.ID, buttonData(m, "Approve"))
	r.finalAnswer(chat, in.ID, "Written.")
}

func TestFullDiffButtonSendsTheWholeChange(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	content := longContent(45)
	r := newRig(t, withRules(fakeapi.ToolTurn("LONGWRITE", "Write", map[string]any{
		"file_path": "{{cwd}}/generated.txt", "content": content}, "Written.")))
	in := r.say(chat, alice, "LONGWRITE please")
	ap := r.approvalMessage(chat, "generated.txt")
	assert.Contains(t, ap.Text, "25 more lines", "the preview is cut")
	data := buttonData(ap, "Full diff")
	require.NotEmpty(t, data, "a cut preview offers the full diff")
	r.tg.UserPresses(chat, ap.ID, data)
	doc := r.waitBot(chat, "the diff", func(m telegramtest.Message) bool { return m.Document != nil })
	assert.Equal(t, "generated.txt.diff", doc.Document.FileName)
	assert.Equal(t, ap.ID, doc.ReplyTo, "it answers the approval")
	diff := string(doc.Document.Data)
	assert.Equal(t, 45, strings.Count(diff, "\n+ line number"), "every line of the change")
	m, _ := r.tg.Snapshot().Message(chat, ap.ID)
	assert.NotEmpty(t, buttonData(m, "Approve"), "the approval still waits")
	r.tg.UserPresses(chat, ap.ID, buttonData(m, "Approve"))
	r.finalAnswer(chat, in.ID, "Written.")
	got, err := os.ReadFile(filepath.Join(r.claude.Workdir, "generated.txt"))
	require.NoError(t, err)
	assert.Equal(t, content, string(got))

	short := r.say(chat, alice, "BASHRUN please")
	sap := r.approvalMessage(chat, "out.txt")
	assert.Empty(t, buttonData(sap, "Full diff"), "a preview that shows everything has no button")
	r.tg.UserPresses(chat, sap.ID, buttonData(sap, "Deny"))
	r.finalAnswer(chat, short.ID, "denied by you") // the script's answer after a tool result names the first turn
}
