package bridge_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/runner/sshtest"
	"github.com/untether/untether/internal/telegramtest"
)

// Projects through the whole stack: the fake Bot API, the bridge, and the
// real CLI against the fake Anthropic API, each project a real directory
// (a real git repository for worktrees).

// callFor returns the model call whose last prompt was prompt.
func (r *rig) callFor(prompt string) fakeapi.Request {
	r.t.Helper()
	for _, c := range r.claude.API.ModelCalls() {
		if c.LastPrompt() == prompt {
			return c
		}
	}
	r.t.Fatalf("no model call for %q", prompt)
	return fakeapi.Request{}
}

// ranIn reports whether the CLI that made call worked in dir.
func ranIn(call fakeapi.Request, dir string) bool {
	return strings.Contains(string(call.Body), "Primary working directory: "+dir+"\n") ||
		strings.Contains(string(call.Body), "Primary working directory: "+dir+`\n`)
}

// resumeLine is the line an answer shows for session id run in dir, by
// the rig's CLI with claudetest's HOME (not the account's, so it is set).
func (r *rig) resumeLine(dir, id string) string {
	return "cd '" + dir + "' && env HOME='" + r.claude.Home + "' " + r.claude.Binary + " --resume " + id
}

// ask sends text and waits for its answer.
func (r *rig) ask(chat telegramtest.ChatID, text string, opts ...telegramtest.UserOption) telegramtest.Message {
	r.t.Helper()
	in := r.tg.UserSends(chat, telegramtest.User{ID: alice, FirstName: "Alice", Username: "alice"}, text, opts...)
	return r.finalAnswer(chat, in.ID, "echo: "+text)
}

// command sends a command and waits for the bot's reply to it.
func (r *rig) command(chat telegramtest.ChatID, text string, contains string, opts ...telegramtest.UserOption) telegramtest.Message {
	r.t.Helper()
	in := r.tg.UserSends(chat, telegramtest.User{ID: alice, FirstName: "Alice", Username: "alice"}, text, opts...)
	return r.waitBot(chat, "reply to "+text, func(m telegramtest.Message) bool { return m.ReplyTo == in.ID && strings.Contains(m.Text, contains) })
}

// realDir is a temporary directory with symlinks resolved, as the CLI
// reports its working directory.
func realDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

func withProjects(projects map[string]config.Project, mutate ...func(*config.Config)) rigOption {
	return withConfig(func(c *config.Config) {
		c.Projects = projects
		for _, m := range mutate {
			m(c)
		}
	})
}

// TestProjectsSwitchAndComeBack: a private chat switches A → B → A; each
// project runs in its own directory with its own session, and coming back
// resumes A's (the fake API sees A's earlier prompt again). /sessions
// lists them with Resume buttons, a busy chat is not switched, and
// mistakes are answered.
func TestProjectsSwitchAndComeBack(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	beta, gone := realDir(t), realDir(t)
	r := newRig(t, withProjects(map[string]config.Project{
		"beta": {Path: beta, Description: "the second repository"},
		"gone": {Path: gone},
	}))
	alpha := r.claude.Workdir

	first := r.ask(chat, "REMEMBER apple in alpha")
	assert.True(t, ranIn(r.callFor("REMEMBER apple in alpha"), alpha))
	alphaSession := r.sessionOf(state.ChatKey{Chat: state.ChatID(alice)})
	assert.Contains(t, first.Text, "📁 default", "the footer names the project")
	assert.Contains(t, first.Text, r.resumeLine(alpha, alphaSession), "and how to go on at a terminal")

	menu := r.command(chat, "/project", "works in default")
	assert.Contains(t, menu.Text, "the second repository")
	assert.Contains(t, menu.Text, beta)
	require.NotEmpty(t, buttonData(menu, "✅ default"), "the current project is marked")
	require.NotEmpty(t, buttonData(menu, "beta"))

	r.command(chat, "/project beta", "starts a new session")
	r.ask(chat, "what do you remember in beta?")
	inBeta := r.callFor("what do you remember in beta?")
	assert.True(t, ranIn(inBeta, beta), "the CLI ran in beta's directory")
	assert.False(t, inBeta.AnyUserContains("REMEMBER apple"), "beta has its own session")
	st := r.command(chat, "/status", "Project: beta")
	assert.Contains(t, st.Text, beta)
	assert.Contains(t, st.Text, "over 1 turn", "the cost of beta's session, not of the chat's every project")

	// A restart keeps the chat in beta, in beta's session.
	r.stop()
	r.start()
	// At once, while the restarted chat's CLI may still be starting
	// (prewarm), a switch is not refused as busy.
	r.command(chat, "/project default", "resumes its session")
	r.command(chat, "/project beta", "resumes its session")
	r.ask(chat, "still in beta after the restart?")
	afterRestart := r.callFor("still in beta after the restart?")
	assert.True(t, ranIn(afterRestart, beta), "the chat's project survived the restart")
	assert.True(t, afterRestart.AnyUserContains("what do you remember in beta?"), "and beta's session resumed")
	// Menus live in memory: the one from before the restart has expired.
	menu = r.command(chat, "/project", "works in beta")

	// Back to alpha with the menu's button: its session resumes.
	r.tg.UserPresses(chat, menu.ID, buttonData(menu, "default"))
	r.waitBot(chat, "switched back", func(m telegramtest.Message) bool {
		return m.ID == menu.ID && strings.Contains(m.Text, "resumes its session")
	})
	r.ask(chat, "back in alpha")
	back := r.callFor("back in alpha")
	assert.True(t, ranIn(back, alpha))
	assert.True(t, back.AnyUserContains("REMEMBER apple in alpha"), "the fake API sees A's earlier prompt again")
	assert.Equal(t, alphaSession, r.sessionOf(state.ChatKey{Chat: state.ChatID(alice)}))

	// A busy chat is not switched; its turn goes on.
	slow := r.say(chat, alice, "SLOW please")
	r.streaming(chat, slow.ID, "slow answer")
	r.command(chat, "/project beta", "finish or /cancel first")
	r.finalAnswer(chat, slow.ID, "slow answer")

	// Mistakes: an unknown name gets the list, a missing directory a clear
	// error, and the chat stays where it was.
	unknown := r.command(chat, "/project nope", "There is no project nope.")
	assert.NotEmpty(t, buttonData(unknown, "beta"))
	require.NoError(t, os.Remove(gone))
	r.command(chat, "/project gone", "cannot be used")
	r.ask(chat, "still in alpha?")
	assert.True(t, ranIn(r.callFor("still in alpha?"), alpha))

	// /sessions: a fresh alpha session, then Resume the first one.
	r.command(chat, "/new", "New session")
	r.ask(chat, "a fresh start")
	assert.False(t, r.callFor("a fresh start").AnyUserContains("REMEMBER apple"))
	list := r.command(chat, "/sessions", "Sessions")
	assert.Contains(t, list.Text, "“REMEMBER apple in alpha”")
	assert.Contains(t, list.Text, "“what do you remember in beta?”")
	assert.Contains(t, list.Text, "“a fresh start”")
	var resume string
	for i, line := range strings.Split(list.Text, "\n") {
		if strings.Contains(line, "REMEMBER apple") {
			n := strings.TrimSuffix(strings.Fields(line)[0], ".")
			resume = buttonData(list, "▶️ "+n)
			require.NotEmpty(t, resume, "line %d has a Resume button", i)
		}
	}
	r.tg.UserPresses(chat, list.ID, resume)
	r.waitBot(chat, "resumed", func(m telegramtest.Message) bool { return m.ID == list.ID && strings.Contains(m.Text, "Resuming") })
	r.ask(chat, "after resume")
	assert.True(t, r.callFor("after resume").AnyUserContains("REMEMBER apple in alpha"), "the old session came back")
	assert.Equal(t, alphaSession, r.sessionOf(state.ChatKey{Chat: state.ChatID(alice)}))

	// A project removed by a reload: the chat is told when it next writes.
	r.command(chat, "/project beta", "resumes its session")
	cfg := *r.b.Config()
	cfg.Projects = map[string]config.Project{}
	r.b.Reload(&cfg)
	in := r.say(chat, alice, "where am I now?")
	r.waitBot(chat, "removal notice", func(m telegramtest.Message) bool {
		return strings.Contains(m.Text, "The project beta is no longer in untether's configuration, so this chat works in default now.")
	})
	r.finalAnswer(chat, in.ID, "echo: where am I now?")
	assert.True(t, ranIn(r.callFor("where am I now?"), alpha))
}

// gitRepo makes a git repository with one commit on main.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := realDir(t)
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"config", "user.email", "test@example.com"},
		{"config", "user.name", "Test"},
		{"commit", "-q", "--allow-empty", "-m", "init"},
	} {
		gitIn(t, dir, args...)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README"), []byte("hello\n"), 0o644))
	gitIn(t, dir, "add", "README")
	gitIn(t, dir, "commit", "-q", "-m", "readme")
	return dir
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// TestBranchWorktree: /branch NAME makes a real git worktree and the chat
// works there; /branch lists it, /branch - goes back to the main checkout
// (its session resumes, and uncommitted changes left behind are named); a
// worktree that disappears is reported, never replaced by the main
// checkout.
func TestBranchWorktree(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	repo := gitRepo(t)
	r := newRig(t, withProjects(map[string]config.Project{"repo": {Path: repo}}, func(c *config.Config) {
		c.Telegram.DefaultProject = "repo"
	}))
	r.ask(chat, "REMEMBER pear on main")
	assert.True(t, ranIn(r.callFor("REMEMBER pear on main"), repo))

	wt := filepath.Join(repo, ".worktrees", "feature")
	r.command(chat, "/branch feature", "Made the worktree feature from the current HEAD")
	assert.Contains(t, gitIn(t, repo, "worktree", "list"), wt, "a real git worktree")
	assert.Equal(t, "feature", gitIn(t, wt, "rev-parse", "--abbrev-ref", "HEAD"))
	assert.Empty(t, gitIn(t, repo, "status", "--porcelain"), ".worktrees is excluded from the main checkout's status")

	done := r.ask(chat, "working on the feature")
	call := r.callFor("working on the feature")
	assert.True(t, ranIn(call, wt), "the CLI ran in the worktree")
	assert.False(t, call.AnyUserContains("REMEMBER pear"), "the worktree has its own session")
	assert.Contains(t, done.Text, "📁 repo · feature")

	require.NoError(t, os.WriteFile(filepath.Join(wt, "draft.txt"), []byte("wip\n"), 0o644))
	list := r.command(chat, "/branch", "Worktrees live in")
	assert.NotEmpty(t, buttonData(list, "feature ✏️"), "a dirty worktree is marked")
	assert.NotEmpty(t, buttonData(list, "main checkout"))

	r.command(chat, "/branch -", "The worktree feature has uncommitted changes; they stay there")
	r.ask(chat, "back on main")
	back := r.callFor("back on main")
	assert.True(t, ranIn(back, repo))
	assert.True(t, back.AnyUserContains("REMEMBER pear on main"), "the main checkout's session resumed")

	// The existing worktree is taken as it is, from the list's button.
	r.tg.UserPresses(chat, list.ID, buttonData(list, "feature"))
	r.waitBot(chat, "back in the worktree", func(m telegramtest.Message) bool {
		return m.ID == list.ID && strings.Contains(m.Text, "resumes its session")
	})
	assert.FileExists(t, filepath.Join(wt, "draft.txt"), "nothing was reset")

	// The worktree disappears: the next start says so and does not run
	// anywhere else.
	r.command(chat, "/new", "New session")
	require.NoError(t, os.RemoveAll(wt))
	r.command(chat, "lost work?", "The worktree feature of project repo is missing")
	for _, c := range r.claude.API.ModelCalls() {
		assert.NotEqual(t, "lost work?", c.LastPrompt(), "no silent fallback to the main checkout")
	}
	r.command(chat, "/branch feature", "Made the worktree")
	r.ask(chat, "recreated")
	assert.True(t, ranIn(r.callFor("recreated"), wt))

	r.command(chat, "/branch ../escape", "not a branch name")
}

// TestContinueFromTerminal: a session started at a terminal in the
// project's directory (the CLI run by hand, outside untether) is picked up
// by /continue, and the answer shows how to take it back.
func TestContinueFromTerminal(t *testing.T) {
	chat := telegramtest.ChatID(alice)
	r := newRig(t)
	r.ask(chat, "an earlier phone session")

	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	terminal, err := r.claude.Converse(ctx, "REMEMBER kiwi at the desk")
	require.NoError(t, err)

	r.command(chat, "/continue", "continues the most recent Claude session")
	answer := r.ask(chat, "what did I say at the desk?")
	call := r.callFor("what did I say at the desk?")
	assert.True(t, call.AnyUserContains("REMEMBER kiwi at the desk"), "the terminal's conversation went on")
	assert.False(t, call.AnyUserContains("an earlier phone session"))
	assert.Equal(t, terminal, r.sessionOf(state.ChatKey{Chat: state.ChatID(alice)}), "the chat adopted the terminal's session")
	assert.Contains(t, answer.Text, r.resumeLine(r.claude.Workdir, terminal), "and can hand it back")

	r.ask(chat, "and after that?")
	assert.True(t, r.callFor("and after that?").AnyUserContains("REMEMBER kiwi at the desk"), "later messages resume it")
	list := r.command(chat, "/sessions", "Sessions")
	assert.Contains(t, list.Text, "(started elsewhere or without text)")
}

// TestForumTopicsAsWorkspaces is the layout projects are for: one forum,
// one topic per repository, made with /topic (createForumTopic) and bound
// at once: one in claude.workdir, one in a git worktree of another
// repository, one on another host through ssh. An unbound topic uses
// topic_default_project, and /project inside a topic binds it.
func TestForumTopicsAsWorkspaces(t *testing.T) {
	const forum, locked = telegramtest.ChatID(-100700), telegramtest.ChatID(-100701)
	repo := gitRepo(t)
	ssh := sshtest.Start(t)
	far := realDir(t)
	r := newRig(t, withProjects(map[string]config.Project{
		"repo": {Path: repo, Description: "a git repository"},
		"far":  {Path: far, Host: ssh.Host, SSHOptions: ssh.Options, Description: "on another host"},
	}, func(c *config.Config) {
		c.Telegram.AllowedChatIDs = []int64{int64(forum), int64(locked)}
		c.Telegram.GroupTrigger = config.GroupTriggerAll
		c.Telegram.TopicDefaultProject = "repo"
	}))
	r.tg.AddChat(telegramtest.Chat{ID: forum, Type: telegramtest.Supergroup, Title: "work", IsForum: true, BotCanManageTopics: true})
	r.tg.AddChat(telegramtest.Chat{ID: locked, Type: telegramtest.Supergroup, Title: "locked", IsForum: true})
	unbound := r.tg.AddTopic(forum)

	made := map[string]telegramtest.ThreadID{}
	for _, tc := range []struct{ args, name string }{{"default", "default"}, {"repo feature", "repo · feature"}, {"far", "far"}} {
		r.command(forum, "/topic "+tc.args, "Made the topic "+tc.name)
		for _, topic := range r.tg.Topics() {
			if topic.Chat == forum && topic.Name == tc.name {
				made[tc.name] = topic.ThreadID
			}
		}
		require.NotZero(t, made[tc.name], "createForumTopic made %q", tc.name)
		r.waitBot(forum, "welcome in the topic", func(m telegramtest.Message) bool {
			return m.Thread == made[tc.name] && strings.Contains(m.Text, "This topic works in "+tc.name)
		})
	}
	wt := filepath.Join(repo, ".worktrees", "feature")
	assert.Contains(t, gitIn(t, repo, "worktree", "list"), wt)

	for _, tc := range []struct {
		topic telegramtest.ThreadID
		text  string
		dir   string
	}{
		{made["default"], "in the default topic", r.claude.Workdir},
		{made["repo · feature"], "in the worktree topic", wt},
		{made["far"], "in the remote topic", far},
		{unbound, "in an unbound topic", repo},
	} {
		answer := r.ask(forum, tc.text, telegramtest.InTopic(tc.topic))
		assert.Equal(t, tc.topic, answer.Thread)
		assert.True(t, ranIn(r.callFor(tc.text), tc.dir), "%q ran in %s", tc.text, tc.dir)
	}

	r.command(forum, "/project far", "This topic works in far", telegramtest.InTopic(unbound))
	r.ask(forum, "bound to far now", telegramtest.InTopic(unbound))
	assert.True(t, ranIn(r.callFor("bound to far now"), far))

	r.command(locked, "/topic repo", "I may not create topics in this group")
	r.command(telegramtest.ChatID(alice), "/topic repo", "works only there")
	assert.Len(t, r.tg.Topics(), 3, "no topic made where it was refused")
}
