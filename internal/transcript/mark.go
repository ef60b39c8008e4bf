package transcript

import (
	"fmt"
	"io/fs"
	"os"
	"time"
)

// Mark is where a transcript stood when it was stamped: how many bytes of
// complete lines it had, its mtime, which file it was, and the last entry
// with a uuid in those bytes (and where that entry's line starts), so a
// later Since can tell growth from a rewrite. The zero Mark is "nothing
// seen yet": Since then counts the whole file. It marshals to JSON, to be
// kept across restarts.
type Mark struct {
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
	UUID    string    `json:"uuid,omitempty"`
	UUIDAt  int64     `json:"uuid_at,omitempty"`
	Dev     uint64    `json:"dev,omitempty"`
	Ino     uint64    `json:"ino,omitempty"`
}

// Turn is one turn a person started, as Since and List report it.
type Turn struct {
	UUID string
	Time time.Time
	Kind Kind
	// Text is what the person typed, cut to a few hundred characters.
	Text string
	// Entrypoint is "cli" when it was typed at an interactive terminal,
	// "sdk-cli" when it came from a -p run (untether, or a person's
	// `claude -p`).
	Entrypoint string
	// Forked is set when the turn is not on the line a resume goes on
	// from (line.go): the conversation forked after it was written, and
	// the other branch was written last, so a CLI resuming the session
	// does not send it to the model.
	Forked bool
}

// Delta is what was appended to a transcript after a Mark.
type Delta struct {
	// Turns are the turns a person started (prompts and bash-mode commands;
	// tool results, meta entries, compaction summaries, slash-command
	// output, interrupts and automatic turns such as task notifications are
	// not turns), oldest first. At most maxTurns are kept; Count has them all.
	Turns []Turn
	Count int
	// Commands are the slash commands run (e.g. "/compact"), oldest first.
	Commands []string
	// Entries counts every appended entry with a uuid: user, assistant,
	// system and attachment entries, the conversation proper. The CLI's
	// bookkeeping lines (last-prompt, cost-state, queue-operation, …) have
	// none and are not counted.
	Entries int
	// Compacted is set when a compaction was appended.
	Compacted bool
	// Rewritten is set when the bytes up to the mark changed: the file was
	// replaced, truncated or rewritten in place. Counting then starts after
	// the marked entry where it is now, or, when it is gone (Lost), cannot
	// be done: Turns and Count are empty.
	Rewritten bool
	Lost      bool
	// Partial is set when more was appended than one call reads (64 MiB);
	// Turns and Count are then lower bounds.
	Partial bool
	// Skipped counts appended lines too long to read (over 8 MiB).
	Skipped int
	// Forked counts, of Count, the turns marked Forked. It is 0 when
	// Partial: the newest entries, which tell the line, were not read.
	Forked int

	line *lineage // the appended entries' links, for ForeignLine's leaf
}

// Extended reports whether anyone appended conversation after the mark, or
// whether it cannot be told that nobody did.
func (d Delta) Extended() bool {
	return d.Entries > 0 || d.Count > 0 || len(d.Commands) > 0 || d.Rewritten || d.Partial || d.Skipped > 0
}

// Foreign returns the turns of d that own does not claim, and how many
// there were: the turns someone else started, when own recognises the
// uuids the caller gave its own prompts (Turn.UUID is the uuid of the
// stream-json user message that started a turn). A caller that stamps
// after each of its turns sees its own last turn too when another program
// wrote meanwhile; Foreign tells them apart. The count is exact while
// d.Count is len(d.Turns) (at most 100 are kept); past that, the turns not
// kept are counted as foreign.
func (d Delta) Foreign(own func(uuid string) bool) ([]Turn, int) {
	var out []Turn
	mine := 0
	for _, t := range d.Turns {
		if t.UUID != "" && own(t.UUID) {
			mine++
			continue
		}
		out = append(out, t)
	}
	return out, d.Count - mine
}

// ForeignLine splits the count Foreign returns: the foreign turns on the
// line a resume goes on from, which a CLI resuming the session sends to
// the model, and those off it, which it does not. The line is that of
// leaf, the last entry of the caller's CLI, which names it when it exits,
// while nothing appended follows it (the session forked beside it, line.go):
// pass it when that CLI is let go of now, so it exits last. With leaf ""
// (no CLI of the caller's runs: the last to exit has named its leaf), the
// line of the leaf the last "last-prompt" entry read names, on the same
// condition; else that of the leaf written last (Turn.Forked).
// Turns past the kept ones are foreign, as in Foreign.
func (d Delta) ForeignLine(own func(uuid string) bool, leaf string) (onLine, forked int) {
	off, allOff := d.offLine(leaf)
	keptOff := 0
	for _, t := range d.Turns {
		isOff := off(t)
		if isOff {
			keptOff++
		}
		if t.UUID != "" && own(t.UUID) {
			continue
		}
		if isOff {
			forked++
		} else {
			onLine++
		}
	}
	rest := d.Count - len(d.Turns)
	restForked := min(max(allOff-keptOff, 0), rest)
	return onLine + rest - restForked, forked + restForked
}

// offLine tells which turns are off the line ForeignLine takes, and how
// many of all the counted turns are.
func (d Delta) offLine(leaf string) (off func(Turn) bool, allOff int) {
	if leaf == "" && d.line != nil {
		leaf = d.line.named
	}
	if on, ok := d.line.lineOf(leaf); ok {
		for _, u := range d.line.turns {
			if u != "" && !on[u] {
				allOff++
			}
		}
		return func(t Turn) bool { return t.UUID != "" && !on[t.UUID] }, allOff
	}
	return func(t Turn) bool { return t.Forked }, d.Forked
}

// maxTurns bounds Delta.Turns; Count keeps counting past it.
const maxTurns = 100

// maxText bounds Turn.Text and Summary.FirstPrompt, in runes.
const maxText = 300

// Stamp returns the Mark of the transcript at path as it is now: call it
// after a turn of one's own has ended (the CLI has written every entry of a
// turn by the time it prints the turn's result). It reads only the file's
// tail.
func Stamp(path string) (Mark, error) {
	f, st, err := open(path)
	if err != nil {
		return Mark{}, err
	}
	defer f.Close()
	return stamp(f, st)
}

// stamp finds the last complete line and the last entry with a uuid by
// reading ever larger tails, up to maxScan.
func stamp(f *os.File, st fs.FileInfo) (Mark, error) {
	dev, ino := identity(st)
	m := Mark{ModTime: st.ModTime(), Dev: dev, Ino: ino}
	size := st.Size()
	for window := int64(tailScan); ; window *= 4 {
		window = min(window, size, maxScan)
		start := size - window
		sp, err := scan(f, start, size, 0, true, func(at int64, line []byte) error {
			if e, ok := decode(line); ok && e.UUID != "" {
				m.UUID, m.UUIDAt = e.UUID, at
			}
			return nil
		})
		if err != nil {
			return Mark{}, fmt.Errorf("stamp transcript: %w", err)
		}
		m.Size = sp.end
		if m.UUID != "" || start == 0 || window == maxScan {
			return m, nil
		}
	}
}

// Since reports what was appended to the transcript at path after m, and
// the Mark to keep for next time. It reads from the mark onwards (at most
// 64 MiB), and the links of the 1 MiB before it (for ForeignLine), not the
// whole file; when the file is unchanged (same file, size and mtime) it
// reads nothing.
func Since(path string, m Mark) (Delta, Mark, error) {
	f, st, err := open(path)
	if err != nil {
		return Delta{}, m, err
	}
	defer f.Close()
	dev, ino := identity(st)
	size := st.Size()
	if m.Size == size && m.ModTime.Equal(st.ModTime()) && m.Dev == dev && m.Ino == ino && m.Size > 0 {
		return Delta{}, m, nil
	}
	var d Delta
	start := m.Size
	if !continues(f, st, m) {
		d.Rewritten = true
		lineAt, end, found, err := find(f, size, m.UUID)
		if err != nil {
			return Delta{}, m, err
		}
		if !found {
			d.Lost = true
			next, err := stamp(f, st)
			return d, next, err
		}
		start, m.UUIDAt = end, lineAt
	}
	next := Mark{ModTime: st.ModTime(), Dev: dev, Ino: ino, UUID: m.UUID, UUIDAt: m.UUIDAt}
	var lin lineage
	lin.prev = m.UUID
	sp, err := scan(f, start, size, maxScan, false, func(at int64, line []byte) error {
		e, ok := decode(line)
		if !ok {
			return nil
		}
		if e.UUID != "" {
			next.UUID, next.UUIDAt = e.UUID, at
		}
		lin.name(&e)
		count := d.Count
		d.add(&e)
		if e.UUID != "" && !e.IsSidechain {
			lin.add(&e, false)
		}
		if d.Count > count {
			lin.turns = append(lin.turns, e.UUID)
		}
		return nil
	})
	if err != nil {
		return Delta{}, m, fmt.Errorf("read transcript after mark: %w", err)
	}
	d.Skipped = sp.skipped
	if sp.truncated {
		d.Partial = true
		next, err = stamp(f, st)
		return d, next, err
	}
	next.Size = sp.end
	if len(lin.turns) > 0 {
		// The links before the mark matter only to place appended turns
		// (the CLI's own bookkeeping lines at its exit append none): read
		// them then, not at every change of the file.
		before, err := linksBefore(f, start)
		if err != nil {
			return Delta{}, m, err
		}
		lin.merge(before)
	}
	d.markForked(lin.offLine())
	d.line = &lin
	return d, next, nil
}

// backScan bounds how far before the mark Since reads links: far enough
// for the end of the caller's own last turn (its answer and what the CLI
// appends to it), so that ForeignLine can tell whether what was appended
// follows that answer.
const backScan = 1 << 20

// linksBefore reads the links of the entries in the backScan bytes before
// start.
func linksBefore(f *os.File, start int64) (lineage, error) {
	var lin lineage
	if start <= 0 {
		return lin, nil
	}
	_, err := scan(f, max(0, start-backScan), start, 0, true, func(_ int64, line []byte) error {
		if e, ok := decode(line); ok {
			lin.name(&e)
			if e.UUID != "" && !e.IsSidechain {
				lin.add(&e, true)
			}
		}
		return nil
	})
	if err != nil {
		return lin, fmt.Errorf("read transcript before mark: %w", err)
	}
	return lin, nil
}

// markForked sets Forked on the turns off the line, and counts them.
func (d *Delta) markForked(off map[string]bool) {
	if len(off) == 0 {
		return
	}
	d.Forked = len(off)
	for i := range d.Turns {
		d.Turns[i].Forked = off[d.Turns[i].UUID]
	}
}

// add counts one appended entry.
func (d *Delta) add(e *entry) {
	if e.IsSidechain {
		return
	}
	if e.UUID != "" {
		d.Entries++
	}
	if e.Type == "system" && e.Subtype == "compact_boundary" {
		d.Compacted = true
	}
	kind, text, ok := e.personal()
	switch {
	case !ok:
	case kind == KindCommand:
		if len(d.Commands) < maxTurns {
			d.Commands = append(d.Commands, clip(text, maxText))
		}
	default:
		d.Count++
		if len(d.Turns) < maxTurns {
			d.Turns = append(d.Turns, Turn{UUID: e.UUID, Time: e.time(), Kind: kind, Text: clip(text, maxText), Entrypoint: e.Entrypoint})
		}
	}
}

// continues reports whether the file still holds the bytes m was taken
// from: the same file, at least as long, with m's last uuid entry still on
// the line where it was.
func continues(f *os.File, st fs.FileInfo, m Mark) bool {
	dev, ino := identity(st)
	if m.Size > st.Size() || (m.Ino != 0 || m.Dev != 0) && (m.Dev != dev || m.Ino != ino) {
		return false
	}
	if m.UUID == "" {
		return true
	}
	if m.UUIDAt < 0 || m.UUIDAt >= m.Size {
		return false
	}
	same := false
	_, err := scan(f, m.UUIDAt, m.Size, 0, false, func(_ int64, line []byte) error {
		e, ok := decode(line)
		same = ok && e.UUID == m.UUID
		return errStop
	})
	return err == nil && same
}

// find locates the line of the entry with uuid id in the last maxScan
// bytes of the file: where it starts and the offset just past it. With no
// id, nothing was marked and everything counts from the start.
func find(f *os.File, size int64, id string) (lineAt, end int64, found bool, err error) {
	if id == "" {
		return 0, 0, true, nil
	}
	_, err = scan(f, max(0, size-maxScan), size, 0, true, func(off int64, line []byte) error {
		if e, ok := decode(line); ok && e.UUID == id {
			lineAt, end, found = off, off+int64(len(line))+1, true
		}
		return nil
	})
	if err != nil {
		return 0, 0, false, fmt.Errorf("find the marked entry: %w", err)
	}
	return lineAt, end, found, nil
}
