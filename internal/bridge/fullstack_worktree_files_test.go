package bridge_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/telegramtest"
)

// Where projects and worktrees meet untether's own files (.untether:
// uploads, the outbox, files sent, full diffs), through the whole stack.

// TestUntetherFilesDoNotMakeAWorktreeDirty: what untether writes in a
// worktree's .untether is not an uncommitted change: the /branch menu has
// no ✏️ and leaving the worktree names none; a real edit still does.
func TestUntetherFilesDoNotMakeAWorktreeDirty(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	repo := gitRepo(t)
	r := newRig(t, withProjects(map[string]config.Project{"repo": {Path: repo}}, func(c *config.Config) {
		c.Telegram.DefaultProject = "repo"
	}))
	wt := filepath.Join(repo, ".worktrees", "feature")
	r.command(chat, "/branch feature", "Made the worktree feature")
	up := filepath.Join(wt, ".untether", "uploads")
	require.NoError(t, os.MkdirAll(up, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(up, "photo.jpg"), []byte("jpeg"), 0o600))
	assert.Empty(t, gitIn(t, wt, "status", "--porcelain"), "the worktree's .untether is git-excluded")

	list := r.command(chat, "/branch", "Worktrees live in")
	assert.NotEmpty(t, buttonData(list, "feature"))
	assert.Empty(t, buttonData(list, "✏️"), "listed as clean")
	left := r.command(chat, "/branch -", "works in repo\n")
	assert.NotContains(t, left.Text, "uncommitted changes")

	// A worktree made before the exclusion: the status itself leaves
	// .untether out.
	exclude := filepath.Join(gitIn(t, repo, "rev-parse", "--path-format=absolute", "--git-common-dir"), "info", "exclude")
	require.NoError(t, os.WriteFile(exclude, []byte("/.worktrees/\n"), 0o644))
	require.NotEmpty(t, gitIn(t, wt, "status", "--porcelain"))
	r.command(chat, "/branch feature", "feature")
	left = r.command(chat, "/branch -", "works in repo\n")
	assert.NotContains(t, left.Text, "uncommitted changes")

	r.command(chat, "/branch feature", "feature")
	require.NoError(t, os.WriteFile(filepath.Join(wt, "draft.txt"), []byte("wip\n"), 0o644))
	list = r.command(chat, "/branch", "Worktrees live in")
	assert.NotEmpty(t, buttonData(list, "✏️"), "a real edit is still marked")
	r.command(chat, "/branch -", "The worktree feature has uncommitted changes")
}

// TestOldBranchMenuKeepsToItsProject: a 🌿 menu pressed after /project
// switched the chat makes no worktree in the new project; one pressed
// after a reload moved the project to another host is refused too.
func TestOldBranchMenuKeepsToItsProject(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	alpha, beta := gitRepo(t), gitRepo(t)
	r := newRig(t, withProjects(map[string]config.Project{"alpha": {Path: alpha}, "beta": {Path: beta}}, func(c *config.Config) {
		c.Telegram.DefaultProject = "alpha"
	}))
	r.command(chat, "/branch feature", "Made the worktree feature")
	list := r.command(chat, "/branch", "Worktrees live in")
	r.command(chat, "/project beta", "works in beta")

	r.tg.UserPresses(chat, list.ID, buttonData(list, "feature"))
	r.waitBot(chat, "refusal", func(m telegramtest.Message) bool {
		return m.ID == list.ID && strings.Contains(m.Text, "This menu was for project alpha")
	})
	assert.NoDirExists(t, filepath.Join(beta, ".worktrees"), "no worktree made in beta")
	assert.NotContains(t, gitIn(t, beta, "branch", "--list"), "feature")

	// The same project, now on another host.
	list = r.command(chat, "/branch", "Worktrees live in")
	cfg := *r.b.Config()
	cfg.Projects = map[string]config.Project{"alpha": {Path: alpha}, "beta": {Path: beta, Host: "far.example"}}
	r.b.Reload(&cfg)
	r.tg.UserPresses(chat, list.ID, buttonData(list, "main checkout"))
	r.waitBot(chat, "remote refusal", func(m telegramtest.Message) bool {
		return m.ID == list.ID && strings.Contains(m.Text, "/branch works only for projects on this machine")
	})
}

// TestReloadLeavesALiveSessionsFilesWhereItRuns: a reload that moves the
// chat to another project (here the default) does not move its running
// CLI, so the files of that CLI's turns (its outbox, /get) are still
// taken from the directory it runs in, and its answers name that project;
// a new session then starts in the new place.
func TestReloadLeavesALiveSessionsFilesWhereItRuns(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	alpha, beta := realDir(t), realDir(t)
	r := newRig(t, withProjects(map[string]config.Project{"alpha": {Path: alpha}, "beta": {Path: beta}}, func(c *config.Config) {
		c.Telegram.DefaultProject = "alpha"
		c.Claude.PermissionMode = config.PermissionAcceptEdits
	}), withRules(fakeapi.ToolTurn("SENDREPORT", "Write", map[string]any{
		"file_path": "{{cwd}}/" + aliceOutbox + "/report.txt", "content": "from alpha\n"}, "The report is on its way.")))
	require.NoError(t, os.WriteFile(filepath.Join(alpha, "notes.txt"), []byte("alpha notes\n"), 0o600))
	assert.Contains(t, r.ask(chat, "hello").Text, "📁 alpha")

	cfg := *r.b.Config()
	cfg.Telegram.DefaultProject = "beta"
	r.b.Reload(&cfg)

	in := r.say(chat, alice, "SENDREPORT please")
	done := r.finalAnswer(chat, in.ID, "The report is on its way.")
	assert.True(t, ranIn(r.callFor("SENDREPORT please"), alpha), "the live CLI stayed in alpha")
	assert.Contains(t, done.Text, "📁 alpha", "the footer names where it ran")
	doc := r.waitBot(chat, "the report", func(m telegramtest.Message) bool { return m.Document != nil })
	assert.Equal(t, "from alpha\n", string(doc.Document.Data))

	got := r.command(chat, "/get notes.txt", "notes.txt")
	require.NotNil(t, got.Document, "/get reads where the CLI runs")
	assert.Equal(t, "alpha notes\n", string(got.Document.Data))
	st := r.command(chat, "/status", "Project: alpha")
	assert.Contains(t, st.Text, "Workdir: "+alpha, "/status names where the live CLI runs")

	r.command(chat, "/new", "New session")
	r.ask(chat, "fresh")
	assert.True(t, ranIn(r.callFor("fresh"), beta), "a new session starts in the new default")
}

// TestOutboxIsDeliveredWhenTheCLIDiesMidTurn: Claude wrote a file to its
// outbox, then its process was killed before the turn's result; the file
// still reaches the chat, after the crash notice.
func TestOutboxIsDeliveredWhenTheCLIDiesMidTurn(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	key := state.ChatKey{Chat: state.ChatID(alice)}
	rules := fakeapi.ToolTurn("STRANDED", "Write", map[string]any{
		"file_path": "{{cwd}}/" + aliceOutbox + "/draft.txt", "content": "half done\n"}, "")
	rules[0].Replies = []fakeapi.Reply{fakeapi.Hang()} // the call after the Write never answers
	r := newRig(t, withConfig(func(c *config.Config) { c.Claude.PermissionMode = config.PermissionAcceptEdits }), withRules(rules))
	in := r.say(chat, alice, "STRANDED please")
	written := filepath.Join(r.claude.Workdir, aliceOutbox, "draft.txt")
	require.Eventually(t, func() bool { _, err := os.Stat(written); return err == nil }, wait, 20*time.Millisecond, "Claude wrote to its outbox")
	pid := r.b.ChatPID(key)
	require.NotZero(t, pid)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))

	doc := r.waitBot(chat, "the stranded file", func(m telegramtest.Message) bool { return m.Document != nil })
	assert.Equal(t, "draft.txt", doc.Document.FileName)
	assert.Equal(t, "half done\n", string(doc.Document.Data))
	assert.Equal(t, in.ID, doc.ReplyTo, "it answers the request")
	assert.Empty(t, r.dirNames(aliceOutbox), "moved to .untether/sent")
}
