package bridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
)

// /continue takes the most recent conversation in the project's directory,
// but only one the chat may see: a session untether ran is the chat's (or
// topic's) that ran it, and never goes to another chat; one started
// outside untether (a terminal) may go to a private chat, never to a group
// or forum topic, where everyone in it would read it. untether finds that
// conversation itself, in the CLI's transcripts, checks whose it is, and
// resumes it by id, so the CLI cannot pick another one between the check
// and the start. A project on another host has its transcripts there:
// untether cannot look, so /continue there is refused in groups and left
// to the CLI's own --continue in a private chat.

// transcriptName is a session's transcript: <session id>.jsonl.
var transcriptName = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl$`)

// slugMax is where the CLI cuts a long directory's name (adding a hash
// this code does not reproduce: such directories are matched by prefix
// and then by the cwd their transcripts record).
const slugMax = 200

// cwdSlug is the CLI's name for a directory under ~/.claude/projects.
func cwdSlug(dir string) string {
	var b strings.Builder
	for _, r := range dir {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-') // the CLI replaces each UTF-16 unit; a rune above U+FFFF is two
			if r > 0xFFFF {
				b.WriteByte('-')
			}
		}
	}
	return b.String()
}

// claudeConfigDir is where the CLI of project p keeps its transcripts:
// $CLAUDE_CONFIG_DIR, else $HOME/.claude, as the CLI's environment will
// have them.
func (b *Bridge) claudeConfigDir(p config.ProjectSettings) string {
	if d := p.Env["CLAUDE_CONFIG_DIR"]; d != "" {
		return d
	}
	home := p.Home
	if home == "" {
		home = p.Env["HOME"]
	}
	if home == "" {
		for _, kv := range b.opts.InheritEnv {
			if v, ok := strings.CutPrefix(kv, "HOME="); ok {
				home = v
			}
		}
	}
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".claude")
}

// latestSession is the id of the most recent conversation the CLI keeps
// for dir ("" when there is none): the transcript written last.
func latestSession(configDir, dir string) (string, error) {
	root := filepath.Join(configDir, "projects")
	slug := cwdSlug(dir)
	dirs := []string{filepath.Join(root, slug)}
	if len(slug) > slugMax {
		dirs, _ = filepath.Glob(filepath.Join(root, globEscape(slug[:slugMax])+"-*"))
	}
	var (
		best   string
		bestAt time.Time
	)
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("list the sessions of %s: %w", dir, err)
		}
		for _, e := range entries {
			if !e.Type().IsRegular() || !transcriptName.MatchString(e.Name()) {
				continue
			}
			info, err := e.Info()
			if err != nil {
				continue // removed meanwhile
			}
			if len(dirs) > 1 && !transcriptOf(filepath.Join(d, e.Name()), dir) {
				continue
			}
			if info.ModTime().After(bestAt) {
				best, bestAt = strings.TrimSuffix(e.Name(), ".jsonl"), info.ModTime()
			}
		}
	}
	return best, nil
}

// transcriptOf reports whether a transcript records dir as its cwd (for
// the long directory names whose hash this code does not reproduce).
func transcriptOf(path, dir string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	n, _ := f.Read(head)
	return strings.Contains(string(head[:n]), `"cwd":`+quoteJSON(dir))
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func globEscape(s string) string {
	return strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`).Replace(s)
}

// continueRefusal says why the chat may not continue session id ("" when
// it may), given whose it is.
func (c *chat) continueRefusal(id string) string {
	se, err := c.b.store.GetSession(c.ctx(), id)
	switch {
	case err == nil && se.Key != c.key:
		return "🔒 The most recent Claude session there is another chat's, and /continue takes only this " + c.chatWord() +
			"'s own sessions" + c.orTerminal() + ". /sessions lists this " + c.chatWord() + "'s."
	case err == nil:
		return ""
	case !errors.Is(err, state.ErrNotFound):
		c.log.Error().Err(err).Msg("read whose the latest session is")
		return "⚠️ Could not tell whose the most recent Claude session there is, so it is not continued."
	case c.group:
		return "🔒 The most recent Claude session there was started outside untether (at a terminal, say). Everyone in this " +
			c.chatWord() + " would read it, so /continue here takes only this " + c.chatWord() +
			"'s own sessions; continue it in a private chat with me instead. /sessions lists this " + c.chatWord() + "'s."
	}
	return ""
}

// orTerminal completes continueRefusal's rule for a private chat.
func (c *chat) orTerminal() string {
	if c.group {
		return ""
	}
	return " or one started outside untether"
}

// continueText says which session the next message continues, and
// whether untether ran it (else it was started outside untether).
func (c *chat) continueText(id, where, pl string) (string, bool) {
	what := "started outside untether (at a terminal, say)"
	se, err := c.b.store.GetSession(c.ctx(), id)
	if err == nil {
		what = "this " + c.chatWord() + "'s own"
		if p := strings.Join(strings.Fields(se.FirstPrompt), " "); p != "" {
			what += ", “" + render.Truncate(p, sessionPromptMax) + "”"
		}
	}
	return "↪️ Your next message continues the most recent Claude session in <code>" + render.EscapeHTML(where) +
		"</code> (" + render.EscapeHTML(what) + "), in project <b>" + render.EscapeHTML(pl) + "</b>.", err == nil
}
