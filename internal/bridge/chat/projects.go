package chat

import (
	Branch "errors"
	"os"
	"strconv"
	"strings"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// Projects follow the settings model: a chat (or forum topic) stores only
// the project and branch its users chose (/project, /topic, /branch, a
// Resume), by name; the project's path, model, modes and env come from the
// config at every spawn. A chat that chose nothing works in the config's
// default project (topic_default_project in a forum topic). A chat keeps
// one session per (project, branch), so switching back resumes. A chosen
// project the config no longer has is dropped, and the chat told, the next
// time it writes.

// Place is where a chat's session runs: a project and a branch, the git
// worktree <path>/.worktrees/<branch> ("" is the main checkout).
type Place struct{ Project, Branch string }

func (p Place) String() string {
	if p.Branch == "" {
		return p.Project
	}
	return p.Project + " · " + p.Branch
}

// isTopic reports whether the chat is a forum topic.
func (c *Chat) isTopic() bool { return c.key.Thread != 0 }

// projectFor returns the chat's project under cfg: its choice while the
// config has it, else the default for a chat or a topic.
func (c *Chat) projectFor(cfg *config.Config) config.ProjectSettings {
	if name := c.record().Project; name != "" {
		if p, ok := c.usableProject(cfg, name); ok { // projects_allowed.go
			return p
		}
	}
	p, _ := cfg.Project(cfg.DefaultProjectFor(c.isTopic()))
	return p
}

// placeFor returns the chat's project and where in it the chat works.
func (c *Chat) placeFor(cfg *config.Config) (config.ProjectSettings, Place) {
	p := c.projectFor(cfg)
	pl := Place{Project: p.Name}
	if rec := c.record(); rec.Branch != "" && strings.EqualFold(rec.Project, p.Name) {
		pl.Branch = rec.Branch
	}
	return p, pl
}

// PlaceDir is the directory a session at pl runs in.
func PlaceDir(p config.ProjectSettings, pl Place) string {
	if pl.Branch == "" {
		return p.Path
	}
	return WorktreeDir(p.Path, pl.Branch)
}

// placeLabel names where the chat works, for footers and headers; "" on a
// daemon with one project and no branch, where it would say nothing.
func (c *Chat) placeLabel(cfg *config.Config) string {
	_, pl := c.placeFor(cfg)
	return placeLabelOf(cfg, pl)
}

// ranLabel is placeLabel for an answer's footer: where the live CLI runs,
// which a config reload does not move.
func (c *Chat) ranLabel(cfg *config.Config) string {
	if c.sess != nil {
		return placeLabelOf(cfg, c.sessPlace)
	}
	return c.placeLabel(cfg)
}

func placeLabelOf(cfg *config.Config, pl Place) string {
	if pl.Branch == "" && len(cfg.ProjectNames()) < 2 {
		return ""
	}
	return pl.String()
}

// WhereText is the project's directory as the user knows it, with the host
// for a remote one.
func WhereText(p config.ProjectSettings, pl Place) string {
	dir := PlaceDir(p, pl)
	if p.Remote() {
		return p.Host + ":" + dir
	}
	return dir
}

// dropRemovedProject forgets a chosen project the config no longer has,
// and tells the chat which one it works in now.
func (c *Chat) dropRemovedProject(cfg *config.Config) {
	rec := c.record()
	if rec.Project == "" {
		return
	}
	if _, ok := c.usableProject(cfg, rec.Project); ok {
		return
	}
	gone := rec.Project
	c.rec.Project, c.rec.Branch = "", ""
	c.saveRecord()
	p := c.projectFor(cfg)
	c.logger().Warn().Str("project", gone).Str("now", p.Name).Msg("the chat's project was removed from the config")
	c.reply("ℹ️ The project <b>"+render.EscapeHTML(gone)+"</b> "+c.goneWhy(cfg, gone)+", so this "+c.chatWord()+
		" works in <b>"+render.EscapeHTML(p.Name)+"</b> now. /project lists the projects.", 0)
}

func (c *Chat) chatWord() string {
	if c.isTopic() {
		return "topic"
	}
	return "chat"
}

// noteSession makes id the session of the place the live session was made
// for, and files it in the chat's history. Only a runner.SessionID is
// stored, so only a canonical UUID ever is.
func (c *Chat) noteSession(id runner.SessionID) {
	c.rec.SessionID = string(id)
	c.saveRecord()
	// A continued session's first prompt was someone else's.
	c.promptNoted = c.continued
	if err := c.b.store.NoteSession(c.ctx(), c.key, c.sessPlace.Project, c.sessPlace.Branch, string(id)); err != nil {
		c.logger().Error().Err(err).Msg("note the session of the project")
	}
}

// noteFirstPrompt keeps the first message of the session for /sessions.
func (c *Chat) noteFirstPrompt(o *Outgoing) {
	if c.promptNoted || c.rec.SessionID == "" || o.resend {
		return
	}
	c.promptNoted = true
	text := o.input.Text
	if strings.TrimSpace(text) == "" {
		text = o.label
	}
	if err := c.b.store.NoteFirstPrompt(c.ctx(), c.rec.SessionID, text); err != nil {
		c.logger().Warn().Err(err).Msg("note the session's first prompt")
	}
}

// dropSession detaches the chat's session: its approvals are withdrawn, a
// turn's progress finished, and its CLI interrupted and closed off the
// actor. The next message starts or resumes whatever the chat's place
// says then.
func (c *Chat) dropSession(why string) { c.detachSession(why, false) }

// detachSession is dropSession; with kill the CLI is killed instead of
// closed (see continueLatest).
func (c *Chat) detachSession(why string, kill bool) {
	old := c.sess
	if old == nil {
		return
	}
	events := c.events
	c.sess, c.events = nil, nil
	c.live.Store(nil)
	for _, a := range c.approvals {
		c.closeApproval(a, "withdrawn", render.DecisionWithdrawn, nil, why)
	}
	if c.turn != nil && !c.turn.done {
		c.finishProgress(c.turn, true)
	}
	// What it runs in the background now stops with it: named once it is
	// gone (its interrupt may already end the tasks, so they are counted
	// here).
	pending, id, pl := old.Pending(), old.ID(), c.sessPlace
	c.b.goTracked(func() {
		closeDetached(c.b, old, events, kill, func() { c.post(item{fn: func() { c.workStopped(why, id, pl, pending) }}) })
	})
}

// switchPlace moves the chat to pl, keeping the session it had there. A
// busy chat is refused: its turn would be cut off. It reports whether the
// chat moved.
func (c *Chat) switchPlace(pl Place, respond func(string)) bool {
	if c.refuseBusy(respond) {
		return false
	}
	c.dropSession("switched to " + pl.String())
	c.continueNext = false
	c.rec.Project, c.rec.Branch = pl.Project, pl.Branch
	sid, err := c.b.store.ProjectSession(c.ctx(), c.key, pl.Project, pl.Branch)
	if err != nil {
		c.logger().Error().Err(err).Msg("read the session of the project")
	}
	c.rec.SessionID = sid
	c.saveRecord()
	return true
}

// onlyStarting reports a CLI that is starting with nothing for it yet (a
// prewarm after a restart): switching away just closes it, as /new would.
func (c *Chat) onlyStarting() bool {
	return c.sess != nil && c.sess.State() == runner.StateStarting &&
		(c.turn == nil || c.turn.done) && len(c.approvals) == 0 && c.pendingSends() == 0
}

// refuseBusy tells a chat whose turn runs (or waits for an approval or a
// slot) that it must end first, and reports whether it did.
func (c *Chat) refuseBusy(respond func(string)) bool {
	if !c.busy() || c.onlyStarting() {
		return false
	}
	_, cur := c.placeFor(c.b.Config())
	respond("⏳ Claude is still working in " + render.Bold(cur.String()) + ": let it finish or /cancel first, then switch.")
	return true
}

// arrivedText says where the chat works now and what the next message does.
func (c *Chat) arrivedText(p config.ProjectSettings, pl Place) string {
	var b strings.Builder
	b.WriteString("📁 This " + c.chatWord() + " works in " + render.Bold(pl.String()))
	if p.Description != "" {
		b.WriteString(" — " + render.EscapeHTML(p.Description))
	}
	b.WriteString("\n" + render.Code(WhereText(p, pl)) + "\n")
	if sid := c.rec.SessionID; sid != "" {
		b.WriteString("Your next message resumes its session")
		if se, err := c.b.store.GetSession(c.ctx(), sid); err == nil && se.Turns > 0 {
			b.WriteString(" (" + render.EscapeHTML(plural(se.Turns, "turn", "turns")) + ", " + render.FormatCost(se.CostUSD) + ")")
		}
		b.WriteString(".")
	} else {
		b.WriteString("Your next message starts a new session there.")
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// CheckProjectDir reports a local project whose directory is gone. A
// remote one is checked when its CLI starts.
func CheckProjectDir(p config.ProjectSettings) error {
	if p.Remote() {
		return nil
	}
	st, err := os.Stat(p.Path)
	if err == nil && !st.IsDir() {
		return Branch.New(p.Path + " is not a directory")
	}
	if err != nil {
		return Branch.New(p.Path + ": " + unwrapPath(err).Error())
	}
	return nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if Branch.As(err, &pe) {
		return pe.Err
	}
	return err
}

// startErrorText explains why the chat's CLI could not start, naming the
// project and what to do, for the errors that are about the project.
func (c *Chat) startErrorText(err error) string {
	cfg := c.b.Config()
	p, pl := c.placeFor(cfg)
	var me *runner.MissingError
	switch {
	case Branch.As(err, &me) && Branch.Is(err, runner.ErrWorkdirMissing) && pl.Branch != "":
		return "⚠️ The worktree " + render.Bold(pl.Branch) + " of project " + render.Bold(p.Name) + " is missing: <code>" +
			render.EscapeHTML(me.Path) + "</code>. <code>/branch " + render.EscapeHTML(pl.Branch) + "</code> creates it again, <code>/branch -</code> goes back to the main checkout."
	case Branch.Is(err, runner.ErrWorkdirMissing) && len(cfg.ProjectNames()) > 1:
		text, _ := missingText(err) // world.go
		return text + "\nIt is project " + render.Bold(p.Name) + "'s; the other projects still work: /project switches."
	}
	if text, ok := missingText(err); ok { // world.go
		return text
	}
	return "⚠️ Could not start Claude: " + render.EscapeHTML(err.Error())
}

// spawnPlace returns where the chat's next session runs and the session it
// resumes there ("" starts one), after dropping a chosen project the config
// lost. A stored id that is not a session id (runner.ParseSessionID) is
// never passed to the CLI: it is forgotten, and the chat told that Claude
// starts a new session.
func (c *Chat) spawnPlace(cfg *config.Config) (config.ProjectSettings, Place, runner.SessionID) {
	c.dropRemovedProject(cfg)
	p, pl := c.placeFor(cfg)
	stored, err := c.b.store.ProjectSession(c.ctx(), c.key, pl.Project, pl.Branch)
	if err != nil {
		c.logger().Error().Err(err).Msg("read the session of the project")
		stored = c.record().SessionID
	}
	if stored == "" {
		return p, pl, ""
	}
	sid, err := runner.ParseSessionID(stored)
	if err != nil {
		c.logger().Error().Err(err).Str("project", pl.String()).Msg("the stored session id is not a session id; starting a new session")
		if err := c.b.store.NoteSession(c.ctx(), c.key, pl.Project, pl.Branch, ""); err != nil {
			c.logger().Error().Err(err).Msg("forget the damaged session id")
		}
		c.rec.SessionID = ""
		c.saveRecord()
		c.reply("⚠️ The session this "+c.chatWord()+" had in <b>"+render.EscapeHTML(pl.String())+
			"</b> cannot be resumed: its stored id is not a valid session id. Claude starts a new session.", 0)
		return p, pl, ""
	}
	return p, pl, sid
}

// forgetPlaceSession is /new's part: the place's session is not resumed.
func (c *Chat) forgetPlaceSession() {
	_, pl := c.placeFor(c.b.Config())
	if err := c.b.store.NoteSession(c.ctx(), c.key, pl.Project, pl.Branch, ""); err != nil {
		c.logger().Error().Err(err).Msg("forget the session of the project")
	}
}

// statusPlace is /status's project line and workdir.
// While a CLI lives it is where that CLI runs, which a config reload does
// not move.
func (c *Chat) statusPlace() (string, string) {
	cfg := c.b.Config()
	p, pl := c.placeFor(cfg)
	where := WhereText(p, pl)
	if c.sess != nil && c.sessDir != "" {
		where = c.sessDir
	}
	return c.ranLabel(cfg), where
}

// bindTopic stores a new forum topic's project and branch before anyone
// writes there, so its first message starts in them.
func (b *Engine) bindTopic(key state.ChatKey, pl Place) error {
	return b.store.PutChat(b.runCtx, state.Chat{Key: key, Project: pl.Project, Branch: pl.Branch})
}

// uploadDir is where the chat's files go: the live CLI's directory, else
// its place's; "" for a project on another host, which cannot see this
// machine's files. A live CLI keeps the directory it was started in across
// a config reload, and Claude was told its outbox there.
func (c *Chat) uploadDir(cfg *config.Config) string {
	if c.sess != nil {
		return c.sessDir
	}
	p, pl := c.placeFor(cfg)
	if p.Remote() {
		return ""
	}
	return PlaceDir(p, pl)
}

// ProjectDirs are the local directories uploads may be saved in: every
// local project's, with its worktrees.
func ProjectDirs(cfg *config.Config) []string {
	var dirs []string
	for _, name := range cfg.ProjectNames() {
		p, _ := cfg.Project(name)
		if p.Remote() {
			continue
		}
		dirs = append(dirs, p.Path)
		dirs = append(dirs, worktreeDirs(p.Path)...) // worktrees.go
	}
	return dirs
}
