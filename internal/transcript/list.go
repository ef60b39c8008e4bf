package transcript

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Entrypoints the CLI records on every entry.
const (
	// EntrypointTerminal is an interactive `claude` at a terminal.
	EntrypointTerminal = "cli"
	// EntrypointPrint is `claude -p` (print mode, text or stream-json):
	// untether's own runs, and a person's or a script's `claude -p` alike.
	EntrypointPrint = "sdk-cli"
)

// Summary describes one session in a project directory.
type Summary struct {
	ID      SessionID
	Path    string
	Size    int64
	ModTime time.Time
	// Started is the first entry's time; Last the last one's read (zero
	// when no entry had one).
	Started, Last time.Time
	// FirstPrompt is the first turn a person started (meta entries,
	// slash commands, caveats and the like skipped), cut to 300
	// characters; empty when none was found in what was read.
	FirstPrompt     string
	FirstPromptUUID string
	// Turns is the number of turns persons started. TurnsExact says it was
	// counted over the whole file; otherwise it is the CLI's own turn
	// counter at the file's end (which counts automatic turns such as task
	// notifications too), or 0 when the tail had none.
	Turns      int
	TurnsExact bool
	// Entrypoint is that of the first prompt ("cli": an interactive
	// terminal; "sdk-cli": print mode, so untether or a person's
	// `claude -p`), LastEntrypoint that of the last entry read.
	Entrypoint, LastEntrypoint string
	// Branch, CWD and Version are the last ones recorded.
	Branch, CWD, Version string
}

// StartedAtTerminal reports whether the session's first prompt was typed
// into an interactive CLI. A print-mode start cannot be told apart from
// untether's own by the transcript: the caller's records must decide.
func (s Summary) StartedAtTerminal() bool { return s.Entrypoint == EntrypointTerminal }

// DefaultLimit is how many sessions List summarises when asked for 0.
const DefaultLimit = 20

// Bounds on List's reads: files up to wholeFile are read whole (turns
// counted exactly) while the call has read less than listBudget; others
// only in their first headScan and last tailScan bytes.
const (
	wholeFile  = 4 << 20
	listBudget = 64 << 20
)

// List summarises the sessions of workdir (see Dir), newest (by mtime)
// first, at most limit of them (DefaultLimit when limit <= 0). A missing
// directory has no sessions. Only regular files named <uuid>.jsonl count:
// symlinks, FIFOs and subagent transcripts (in <id>/subagents/) do not. A
// file that cannot be read is left out; the error is returned only when
// the directory itself cannot be read.
func List(home, workdir string, limit int) ([]Summary, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	dir := Dir(home, workdir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	type cand struct {
		id    SessionID
		mtime time.Time
	}
	var cands []cand
	for _, de := range ents {
		name := de.Name()
		id := SessionID(strings.TrimSuffix(name, ".jsonl"))
		// Symlinks, FIFOs and directories so named are refused when opened.
		if !strings.HasSuffix(name, ".jsonl") || !id.Valid() {
			continue
		}
		info, err := de.Info()
		if err != nil {
			continue // removed since ReadDir
		}
		cands = append(cands, cand{id, info.ModTime()})
	}
	slices.SortFunc(cands, func(a, b cand) int {
		return cmp.Or(b.mtime.Compare(a.mtime), cmp.Compare(a.id, b.id))
	})
	budget := int64(listBudget)
	var out []Summary
	for _, c := range cands {
		if len(out) == limit {
			break
		}
		s, read, err := summarise(filepath.Join(dir, string(c.id)+".jsonl"), budget)
		if err != nil {
			continue
		}
		budget -= read
		s.ID = c.id
		out = append(out, s)
	}
	// Sorted again on the fstat mtimes: a file may have grown meanwhile.
	slices.SortStableFunc(out, func(a, b Summary) int { return b.ModTime.Compare(a.ModTime) })
	return out, nil
}

// Summarise describes the one transcript at path (List's per-file work).
func Summarise(path string) (Summary, error) {
	s, _, err := summarise(path, listBudget)
	if err != nil {
		return Summary{}, err
	}
	s.ID = SessionID(strings.TrimSuffix(filepath.Base(path), ".jsonl"))
	return s, nil
}

// summarise reads one file, whole when it is small enough for budget, else
// its head and tail, and returns how many bytes it read.
func summarise(path string, budget int64) (Summary, int64, error) {
	f, st, err := open(path)
	if err != nil {
		return Summary{}, 0, err
	}
	defer f.Close()
	size := st.Size()
	s := Summary{Path: path, Size: size, ModTime: st.ModTime()}
	var sm summer
	if size <= wholeFile && size <= budget {
		if _, err := scan(f, 0, size, 0, false, sm.line); err != nil {
			return Summary{}, 0, err
		}
		sm.fill(&s, true)
		return s, size, nil
	}
	head := min(int64(headScan), size)
	if _, err := scan(f, 0, size, head, false, func(at int64, line []byte) error {
		if err := sm.line(at, line); err != nil {
			return err
		}
		if sm.firstText != "" {
			return errStop
		}
		return nil
	}); err != nil {
		return Summary{}, 0, err
	}
	sm.tail = true
	from := max(size-tailScan, 0)
	if _, err := scan(f, from, size, 0, true, sm.line); err != nil {
		return Summary{}, 0, err
	}
	sm.fill(&s, false)
	return s, head + size - from, nil
}

// summer accumulates a Summary over the lines of a head, a tail or a
// whole file.
type summer struct {
	tail      bool // lines now come from the tail
	about     about
	first     Turn
	firstText string
	turns     int
	turnIndex int
}

func (sm *summer) line(_ int64, line []byte) error {
	e, ok := decode(line)
	if !ok || e.IsSidechain {
		return nil
	}
	sm.about.note(&e)
	if ti := e.turnIndex(); ti > sm.turnIndex {
		sm.turnIndex = ti
	}
	kind, text, ok := e.personal()
	if !ok || kind == KindCommand {
		return nil
	}
	sm.turns++
	if sm.firstText == "" && !sm.tail {
		sm.first = Turn{UUID: e.UUID, Time: e.time(), Kind: kind, Entrypoint: e.Entrypoint}
		sm.firstText = clip(text, maxText)
	}
	return nil
}

func (sm *summer) fill(s *Summary, whole bool) {
	a := sm.about
	s.Started, s.Last = a.first, a.last
	s.FirstPrompt, s.FirstPromptUUID, s.Entrypoint = sm.firstText, sm.first.UUID, sm.first.Entrypoint
	s.LastEntrypoint, s.Branch, s.CWD, s.Version = a.entrypoint, a.branch, a.cwd, a.version
	if whole {
		s.Turns, s.TurnsExact = sm.turns, true
	} else {
		s.Turns = sm.turnIndex
	}
}
