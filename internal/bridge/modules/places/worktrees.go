package places

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/owndir"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// /branch NAME runs the chat in a git worktree of its project,
// <path>/.worktrees/NAME, made with the system git (`git worktree add`)
// from the project's worktree_base (default: the current HEAD), or taken as
// it is when it exists. Git runs off the actor, with the daemon's
// allow-listed environment only (hooks run in it). A worktree that is
// missing or dirty is said so, never silently replaced by the main
// checkout.

// gitTimeout bounds one git command (a worktree add checks out files).
const gitTimeout = 2 * time.Minute

// branchPattern keeps branch names usable as directory and topic names;
// git check-ref-format has the final word.
var branchPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,63}$`)

// git runs git in dir and returns its trimmed output; a failure carries
// git's own message.
func (m *Module) git(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(runner.BuildEnv(m.host.InheritEnv(), nil), "GIT_TERMINAL_PROMPT=0")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errOut.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("git %s: %s", args[0], msg)
	}
	return strings.TrimSpace(out.String()), nil
}

// worktree is one of a project's worktrees under .worktrees.
type worktree struct {
	branch  string
	dir     string
	missing bool
	dirty   bool
}

// listWorktrees returns the project's worktrees under .worktrees, with
// whether each is dirty or missing.
func (m *Module) listWorktrees(ctx context.Context, repo string) ([]worktree, error) {
	out, err := m.git(ctx, repo, "worktree", "list", "--porcelain")
	if err != nil {
		return nil, err
	}
	root := filepath.Join(repo, chat.WorktreesDir) + string(filepath.Separator)
	var wts []worktree
	for _, block := range strings.Split(out, "\n\n") {
		var wt worktree
		for _, line := range strings.Split(block, "\n") {
			if p, ok := strings.CutPrefix(line, "worktree "); ok {
				wt.dir = p
			}
		}
		rel, ok := strings.CutPrefix(wt.dir, root)
		if !ok {
			continue
		}
		wt.branch = rel
		if _, err := os.Stat(wt.dir); err != nil {
			wt.missing = true
		} else {
			wt.dirty = m.dirty(ctx, wt.dir)
		}
		wts = append(wts, wt)
	}
	return wts, nil
}

// dirty reports uncommitted changes (untracked files included) in dir.
// untether's own .untether directory (uploads, files sent, full diffs) is
// not a change: the pathspec leaves it out even in a worktree made before
// info/exclude named it.
func (m *Module) dirty(ctx context.Context, dir string) bool {
	out, err := m.git(ctx, dir, "status", "--porcelain", "--", ".", ":(exclude)"+owndir.Root)
	return err == nil && out != ""
}

// ensureWorktree makes the project's worktree for branch, or checks the
// one there. It reports whether it made it.
func (m *Module) ensureWorktree(ctx context.Context, p config.ProjectSettings, branch string) (bool, error) {
	top, err := m.git(ctx, p.Path, "rev-parse", "--show-toplevel")
	if err != nil {
		return false, fmt.Errorf("project %s is not a git repository (%s), so it has no worktrees", p.Name, p.Path)
	}
	if !branchPattern.MatchString(branch) || strings.Contains(branch, "..") {
		return false, fmt.Errorf("%q is not a branch name untether uses: letters, digits, '.', '_', '-' and '/'", branch)
	}
	if _, err := m.git(ctx, p.Path, "check-ref-format", "--branch", branch); err != nil {
		return false, fmt.Errorf("%q is not a valid git branch name", branch)
	}
	common, err := m.git(ctx, p.Path, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return false, err
	}
	dir := chat.WorktreeDir(p.Path, branch)
	if _, err := os.Stat(dir); err == nil {
		theirs, err := m.git(ctx, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
		if err != nil || theirs != common {
			return false, fmt.Errorf("%s exists but is not a worktree of project %s; move it away first", dir, p.Name)
		}
		return false, nil
	}
	// A worktree whose directory was deleted is still registered.
	if _, err := m.git(ctx, p.Path, "worktree", "prune"); err != nil {
		return false, err
	}
	args := []string{"worktree", "add"}
	if _, err := m.git(ctx, p.Path, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err == nil {
		args = append(args, dir, branch)
	} else {
		base := p.WorktreeBase
		if base == "" {
			base = "HEAD"
		}
		args = append(args, "-b", branch, "--", dir, base)
	}
	if _, err := m.git(ctx, p.Path, args...); err != nil {
		return false, err
	}
	excludeWorktrees(common, top, p.Path)
	return true, nil
}

// excludeWorktrees keeps .worktrees out of the main checkout's git status,
// and each worktree's .untether (untether's uploads, files sent and full
// diffs, at the worktree's top) out of the worktree's, through the
// repository's own info/exclude (nothing committed), which every worktree
// shares: Claude's `git add -A` in a worktree takes none of it either.
func excludeWorktrees(common, top, path string) {
	rel, err := filepath.Rel(top, path)
	if err != nil {
		return
	}
	pattern := "/" + filepath.ToSlash(filepath.Join(rel, chat.WorktreesDir)) + "/"
	pattern = strings.Replace(pattern, "/./", "/", 1)
	file := filepath.Join(common, "info", "exclude")
	old, _ := os.ReadFile(file)
	var add []byte
	for _, p := range []string{pattern, "/" + owndir.Root + "/"} {
		if !bytes.Contains(old, []byte(p+"\n")) {
			add = append(add, p+"\n"...)
		}
	}
	if len(add) == 0 {
		return
	}
	_ = os.MkdirAll(filepath.Dir(file), 0o755)
	if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
		old = append(old, '\n')
	}
	_ = os.WriteFile(file, append(old, add...), 0o644)
}

// chooseBranch is /branch: without an argument it lists the worktrees as
// buttons, "-" goes back to the main checkout, a name switches to (and if
// needed makes) that worktree.
func (m *Module) chooseBranch(c *chat.Chat, arg string, replyTo int) {
	cfg := c.Config()
	p, pl := c.Place(cfg)
	respond := func(html string) { c.Reply(html, replyTo) }
	if p.Remote() {
		respond(remoteBranchText(p))
		return
	}
	name := strings.TrimSpace(arg)
	if name != "" {
		m.applyBranch(c, p.Name, name, respond)
		return
	}
	c.Offload(func(ctx context.Context) func() {
		wts, err := m.listWorktrees(ctx, p.Path)
		return func() {
			if err != nil {
				respond("⚠️ Project " + render.Bold(p.Name) + " has no worktrees: " + render.EscapeHTML(err.Error()))
				return
			}
			choices, labels := []string{"-"}, []string{"main checkout"}
			for _, wt := range wts {
				label := wt.branch
				switch {
				case wt.missing:
					label += " (missing)"
				case wt.dirty:
					label += " ✏️"
				}
				choices, labels = append(choices, wt.branch), append(labels, label)
			}
			cur := pl.Branch
			if cur == "" {
				cur = "-"
			}
			menu := c.ShowMenuLabeled("branch", "🌿 This "+c.ChatWord()+" works in <b>"+render.EscapeHTML(pl.String())+"</b>.\n"+
				"Worktrees live in <code>"+render.EscapeHTML(filepath.Join(p.Path, chat.WorktreesDir))+"</code>; ✏️ has uncommitted changes.\n"+
				"Choose one, or send <code>/branch NAME</code> to make one:", choices, labels, cur, replyTo)
			menu.SetData(p.Name)
		}
	})
}

// remoteBranchText refuses worktrees of a project on another host.
func remoteBranchText(p config.ProjectSettings) string {
	return "🌐 Project " + render.Bold(p.Name) + " is on " + render.EscapeHTML(p.Host) +
		"; /branch works only for projects on this machine."
}

// applyBranch switches the chat to the worktree for branch ("-": the main
// checkout) of its project, making the worktree when it does not exist.
// project is the project the choice was made for (a menu's, pressed
// later): when the chat has since moved to another, nothing is applied.
func (m *Module) applyBranch(c *chat.Chat, project, branch string, respond func(string)) {
	cfg := c.Config()
	p, cur := c.Place(cfg)
	if project != p.Name {
		respond("🌿 This menu was for project " + render.Bold(project) + "; this " + c.ChatWord() +
			" now works in " + render.Bold(p.Name) + ". Send /branch for its worktrees.")
		return
	}
	if p.Remote() {
		respond(remoteBranchText(p))
		return
	}
	if c.RefuseBusy(respond) {
		return
	}
	to := chat.Place{Project: p.Name}
	if branch != "-" {
		to.Branch = branch
	}
	c.Offload(func(ctx context.Context) func() {
		var (
			created bool
			err     error
		)
		if to.Branch != "" {
			created, err = m.ensureWorktree(ctx, p, to.Branch)
		}
		leftDirty := cur.Branch != "" && cur != to && m.dirty(ctx, chat.PlaceDir(p, cur))
		return func() {
			if err != nil {
				respond("⚠️ " + render.EscapeHTML(err.Error()))
				return
			}
			if !c.SwitchPlace(to, respond) {
				return
			}
			var b strings.Builder
			if created {
				base := p.WorktreeBase
				if base == "" {
					base = "the current HEAD"
				}
				b.WriteString("🌿 Made the worktree " + render.Bold(to.Branch) + " from " + render.EscapeHTML(base) + ".\n")
			}
			if leftDirty {
				b.WriteString("✏️ The worktree " + render.Bold(cur.Branch) + " has uncommitted changes; they stay there.\n")
			}
			b.WriteString(c.ArrivedText(p, to))
			respond(b.String())
		}
	})
}
