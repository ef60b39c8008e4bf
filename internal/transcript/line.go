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
// real CLI: the file's order decides, not the timestamps). Since takes the
// leaf written last among the appended entries, the one a CLI let go of
// just now names when it exits: after a turn a terminal forked, the
// caller's answer, when the terminal's turn ended before it. Turns off
// that leaf's line are marked Forked.

// node is what Since keeps of an appended entry to follow the line.
type node struct {
	parent string
	talk   bool // a user or assistant entry: what the CLI resumes from
	order  int  // its place among the appended entries
}

// lineage collects the appended entries' links while Since reads.
type lineage struct {
	nodes map[string]*node
	prev  string   // the last uuid read, for entries that name no parent
	turns []string // the uuids of the counted turns, oldest first
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

// add records an appended entry with a uuid (not a sidechain's).
func (l *lineage) add(e *entry) {
	if l.nodes == nil {
		l.nodes = map[string]*node{}
	}
	if _, dup := l.nodes[e.UUID]; !dup {
		l.nodes[e.UUID] = &node{parent: l.link(e), talk: e.Type == "user" || e.Type == "assistant", order: len(l.nodes)}
	}
	l.prev = e.UUID
}

// offLine reports, for the uuids of turns, which are not on the line of
// the leaf a resume goes on from. It knows only the appended entries: the
// leaf is taken among them (what was written since the mark is newer than
// what was before), and the line followed back until it leaves them. When
// no leaf can be told, or the links loop, every turn is taken as on it.
func (l *lineage) offLine() map[string]bool {
	leaf := l.leaf()
	if leaf == "" {
		return nil
	}
	on := map[string]bool{}
	for u := leaf; u != ""; {
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
	off := map[string]bool{}
	for _, u := range l.turns {
		if u != "" && !on[u] {
			off[u] = true
		}
	}
	return off
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
		if parents[u] {
			continue // not an end
		}
		// Back to the nearest user or assistant entry (bounded: a loop
		// ends the walk).
		for steps := 0; n != nil && !n.talk && steps <= len(l.nodes); steps++ {
			u = n.parent
			n = l.nodes[u]
		}
		if n == nil || !n.talk || talkParents[u] {
			continue
		}
		if best == nil || n.order > best.order {
			best, bestID = n, u
		}
	}
	return bestID
}
