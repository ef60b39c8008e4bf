package transcript

import (
	"bytes"
	"encoding/json"
)

// The line a resume goes on from. Each conversation entry names the entry
// it follows (parentUuid), so a transcript is a tree, and it forks when
// two CLIs append to one session: a CLI busy with a turn while another
// process resumes the session writes its answer after its own prompt,
// while the other process wrote a turn after that same prompt too. A
// resume (CLI 2.1.328) sends the model one leaf's line (its parents, back
// to the start or a compaction), not the branch beside it. With one leaf
// that is the only one; with more, the leaf the last "last-prompt" entry
// names, which a CLI writes when it exits (and, in stream-json mode, after
// its first turn only), or else the leaf written last (checked with the
// real CLI: the file's order decides, not the timestamps). Since marks
// Forked the turns off the line of the leaf written last among the
// appended entries. Delta.ForeignLine, told the last entry of the caller's
// own CLI, takes that entry's line instead while no user or assistant
// entry follows it: that CLI names it when it exits, so a resume after
// that goes on from it even when the terminal's branch was written last.

// node is what Since keeps of an appended entry to follow the line.
type node struct {
	parent string
	talk   bool // a user or assistant entry: what the CLI resumes from
	order  int  // its place in the file among the entries read
	before bool // read before the mark, for its links only
}

// lineage collects the appended entries' links while Since reads.
type lineage struct {
	nodes map[string]*node
	prev  string   // the last uuid read, for entries that name no parent
	turns []string // the uuids of the counted turns, oldest first
	named string   // the leaf the last "last-prompt" entry read names
}

// merge adds the entries read before the mark; an appended entry, and a
// "last-prompt" entry appended, win.
func (l *lineage) merge(before lineage) {
	if l.nodes == nil {
		l.nodes = map[string]*node{}
	}
	for u, n := range before.nodes {
		if _, dup := l.nodes[u]; !dup {
			l.nodes[u] = n
		}
	}
	if l.named == "" {
		l.named = before.named
	}
}

// name notes e's leaf when it is a "last-prompt" entry.
func (l *lineage) name(e *entry) {
	if e.Type == "last-prompt" && e.LeafUUID != "" {
		l.named = e.LeafUUID
	}
}

// link returns the uuid e follows: its parentUuid, or, for a compaction
// (whose parentUuid is null), the entry it summarised (logicalParentUuid),
// whose line the summary carries on. An entry without the field (older
// CLIs, hand-written files) is taken to follow the entry before it.
func (l *lineage) link(e *entry) string {
	switch {
	case len(e.ParentUUID) == 0:
		return l.prev
	case e.LogicalParentUUID != "":
		return e.LogicalParentUUID
	}
	var p string
	if bytes.Equal(e.ParentUUID, []byte("null")) || json.Unmarshal(e.ParentUUID, &p) != nil {
		return ""
	}
	return p
}

// add records an entry with a uuid (not a sidechain's): appended, or read
// before the mark.
func (l *lineage) add(e *entry, before bool) {
	if l.nodes == nil {
		l.nodes = map[string]*node{}
	}
	if _, dup := l.nodes[e.UUID]; !dup {
		l.nodes[e.UUID] = &node{parent: l.link(e), talk: e.Type == "user" || e.Type == "assistant",
			order: len(l.nodes), before: before}
	}
	l.prev = e.UUID
}

// offLine reports, for the uuids of turns, which are not on the line of
// the leaf written last. It knows only the appended entries: the leaf is
// taken among them (what was written since the mark is newer than what was
// before), and the line followed back until it leaves them. When no leaf
// can be told, or the links loop, every turn is taken as on it.
func (l *lineage) offLine() map[string]bool {
	on := l.line(l.leaf())
	if on == nil {
		return nil
	}
	off := map[string]bool{}
	for _, u := range l.turns {
		if u != "" && !on[u] {
			off[u] = true
		}
	}
	return off
}

// line is the set of uuids on head's line, back to where it leaves the
// appended entries; nil when head is "" or the links loop.
func (l *lineage) line(head string) map[string]bool {
	if head == "" {
		return nil
	}
	on := map[string]bool{}
	for u := head; u != ""; {
		if on[u] {
			return nil // a loop: nothing can be told
		}
		on[u] = true
		n, ok := l.nodes[u]
		if !ok {
			break // before the mark
		}
		u = n.parent
	}
	return on
}

// lineOf is head's line when head, the last entry of a CLI that names it
// when it exits, is still a leaf: no appended user or assistant entry
// follows it (the CLI's own attachments may), so the session forked
// beside it (or nothing was appended after it) and a resume after that CLI
// exits goes on from it. ok is false when head is "", not among the
// entries read (appended, or in the backScan bytes before the mark: an
// entry older than those was written before head, so follows nothing it
// could), is followed, or the links loop.
func (l *lineage) lineOf(head string) (on map[string]bool, ok bool) {
	if l == nil || l.nodes[head] == nil {
		return nil, false
	}
	// follows memoises whether an entry's line reaches head.
	follows := map[string]bool{head: true}
	for u, n := range l.nodes {
		if !n.talk || n.before || u == head {
			continue
		}
		var path []string
		reached := false
		for v := u; v != ""; {
			if r, seen := follows[v]; seen {
				reached = r
				break
			}
			follows[v] = false // provisional: a loop ends here
			path = append(path, v)
			nv, inside := l.nodes[v]
			if !inside {
				break
			}
			v = nv.parent
		}
		for _, v := range path {
			follows[v] = reached
		}
		if reached {
			return nil, false // a user or assistant entry follows it
		}
	}
	on = l.line(head)
	return on, on != nil
}

// leaf is the CLI's choice among the appended entries, as when the
// last-prompt entry names the leaf written last: from each entry nothing
// follows, back to its nearest user or assistant entry; of those that no
// user or assistant entry follows directly, the one written last.
func (l *lineage) leaf() string {
	parents, talkParents := map[string]bool{}, map[string]bool{}
	for _, n := range l.nodes {
		parents[n.parent] = true
		if n.talk {
			talkParents[n.parent] = true
		}
	}
	var best *node
	bestID := ""
	for u, n := range l.nodes {
		if parents[u] || n.before {
			continue // not an end, or not appended
		}
		// Back to the nearest user or assistant entry (bounded: a loop
		// ends the walk).
		for steps := 0; n != nil && !n.talk && steps <= len(l.nodes); steps++ {
			u = n.parent
			n = l.nodes[u]
		}
		if n == nil || !n.talk || n.before || talkParents[u] {
			continue
		}
		if best == nil || n.order > best.order {
			best, bestID = n, u
		}
	}
	return bestID
}
