package ingress

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-telegram/bot/models"
)

// The update guard stands between Telegram and go-telegram/bot's poller.
//
// The library decodes a getUpdates response as one []*models.Update; a
// single value it cannot decode (a forward origin of a type it does not
// know, a string where a number belongs) fails the whole batch, the offset
// never advances, and the poller asks for the same batch forever: the bot
// handles nothing again while looking alive (issue 16, upstream #90). A
// null element would even crash the poller's goroutine.
//
// The guard decodes each update on its own. One that decodes passes through
// untouched. One that does not is repaired (see repairer): the parts the
// library refuses are dropped or replaced and the rest, the user's text
// included, still reaches the bridge. An update that cannot be repaired is
// replaced by its bare {"update_id":N}, so the library still advances the
// offset past it and the bridge skips it with a log line. Elements without a
// readable update_id cannot be confirmed and are dropped; a batch made only
// of those fails, so the library backs off and liveness notices.

// Note is what the guard learned about one update; the bridge logs it
// when it handles the update (LogRepaired, LogUnrouted).
type Note struct {
	kind    string   // the update's kind as sent: "message", "callback_query", …
	repairs []repair // what was dropped or replaced to decode it
	skipErr error    // nothing could be recovered; the library saw a bare id
	service string   // the service member of a message (service.go), "" if a person wrote it
	// raw is a message's (or an edit's) update exactly as the library
	// decoded it: what the bridge keeps until its chat has handled it, and
	// where it reads what the library drops (readable.go). Re-encoding the
	// library's model loses what it can decode but not encode (PaidMedia
	// in v1.19), so the kept message would not come back as it came.
	raw []byte
	// received is when the getUpdates response that brought the update
	// was read.
	received time.Time
}

// guardedBatch is a getUpdates response made safe for the library.
type guardedBatch struct {
	body       []byte // the response the library decodes
	passed     bool   // an error envelope, passed on untouched
	count      int    // updates handed on
	maxID      int64  // highest update_id handed on, if count > 0
	notes      map[int64]Note
	unreadable []string // excerpts of dropped elements without an update_id
}

// ErrUndecodableBatch marks a getUpdates response from which no update can
// be confirmed.
var ErrUndecodableBatch = errors.New("undecodable getUpdates response")

// guardUpdates rewrites the body of a successful getUpdates response.
func guardUpdates(body []byte) (guardedBatch, error) {
	var env struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return guardedBatch{}, fmt.Errorf("%w: %v", ErrUndecodableBatch, err)
	}
	if !env.OK {
		return guardedBatch{body: body, passed: true}, nil // the library reports the API error
	}
	var elems []json.RawMessage
	if len(env.Result) > 0 {
		if err := json.Unmarshal(env.Result, &elems); err != nil {
			return guardedBatch{}, fmt.Errorf("%w: result is not a list: %v", ErrUndecodableBatch, err)
		}
	}
	type kept struct {
		id  int64
		raw []byte
	}
	g := guardedBatch{notes: map[int64]Note{}}
	out := make([]kept, 0, len(elems))
	for _, e := range elems {
		id, ok := updateIDOf(e)
		if !ok {
			g.unreadable = append(g.unreadable, excerpt(e))
			continue
		}
		raw, note := guardUpdate(id, e)
		if (note.kind == "message" || note.kind == "edited_message") && note.skipErr == nil {
			note.raw = raw
		}
		if note.kind != "callback_query" || note.repairs != nil || note.skipErr != nil {
			g.notes[id] = note
		}
		out = append(out, kept{id, raw})
	}
	if len(elems) > 0 && len(out) == 0 {
		return guardedBatch{unreadable: g.unreadable},
			fmt.Errorf("%w: none of its %d updates has a readable update_id", ErrUndecodableBatch, len(elems))
	}
	// The library takes the offset from the last update of a batch: in id
	// order, that is the highest one.
	sort.SliceStable(out, func(i, j int) bool { return out[i].id < out[j].id })
	var b bytes.Buffer
	b.WriteString(`{"ok":true,"result":[`)
	for i, k := range out {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(k.raw)
	}
	b.WriteString("]}")
	g.body, g.count = b.Bytes(), len(out)
	if len(out) > 0 {
		g.maxID = out[len(out)-1].id
	}
	return g, nil
}

// guardUpdate returns an update the library can decode, and what had to be
// done to get it.
func guardUpdate(id int64, raw []byte) ([]byte, Note) {
	note := Note{kind: kindOf(raw)}
	if note.kind == "message" || note.kind == "edited_message" {
		var u map[string]json.RawMessage
		if json.Unmarshal(raw, &u) == nil {
			note.service = serviceOfRaw(u[note.kind])
		}
	}
	// A message must also encode again: the bridge keeps it that way until
	// its chat has handled it.
	r := &repairer{encodable: note.kind == "message"}
	if r.accepts(raw, typeOf[models.Update]()) == nil {
		return raw, note
	}
	out, ok, err := r.fix(raw, typeOf[models.Update](), "", 0)
	if !ok {
		note.skipErr = err
		return fmt.Appendf(nil, `{"update_id":%d}`, id), note
	}
	note.repairs = r.repairs
	if note.repairs == nil {
		note.repairs = []repair{} // repaired without a visible change (duplicate keys collapsed)
	}
	return out, note
}

// updateIDOf reads update_id as the library does; an element without one
// (or not an object at all) cannot be confirmed.
func updateIDOf(raw []byte) (int64, bool) {
	var v struct {
		ID *int64 `json:"update_id"`
	}
	if json.Unmarshal(raw, &v) != nil || v.ID == nil {
		return 0, false
	}
	return *v.ID, true
}

// kindOf names an update by its first member that is a kind the library
// knows, else by its first member other than update_id.
func kindOf(raw []byte) string {
	members, _ := objectMembers(raw)
	other := ""
	for _, m := range members {
		if strings.EqualFold(m.key, "update_id") {
			continue
		}
		if f, known := fieldsOf(typeOf[models.Update]()).lookup(m.key); known {
			return f.name
		}
		if other == "" {
			other = m.key
		}
	}
	return other
}

func excerpt(raw []byte) string {
	const n = 200
	if len(raw) > n {
		return string(raw[:n]) + "…"
	}
	return string(raw)
}

// updateNotes carries notes from the guard (in the HTTP transport) to the
// handler (in the library's worker), keyed by update id. It is bounded: a
// note whose update never reaches the handler is eventually forgotten.
type updateNotes struct {
	mu sync.Mutex
	m  map[int64]Note
}

const maxUpdateNotes = 4096

func (n *updateNotes) add(notes map[int64]Note) {
	if len(notes) == 0 {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.m == nil {
		n.m = map[int64]Note{}
	}
	for id, note := range notes {
		n.m[id] = note
	}
	for len(n.m) > maxUpdateNotes {
		lowest := int64(0)
		first := true
		for id := range n.m {
			if first || id < lowest {
				lowest, first = id, false
			}
		}
		delete(n.m, lowest)
	}
}

func (n *updateNotes) take(id int64) Note {
	n.mu.Lock()
	defer n.mu.Unlock()
	note := n.m[id]
	delete(n.m, id)
	return note
}
