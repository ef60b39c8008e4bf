package telegramtest

import (
	"encoding/json"
	"fmt"
)

// Raw updates let tests play a newer Telegram, or a hostile server: content
// the fake's own model (and go-telegram/bot's) does not know.

// WithRawFields adds members to the message object of the update, replacing
// the fake's own where names collide (a "forward_origin" of a type no client
// knows yet, a "text" that is a number). The message is otherwise a normal
// one: stored in the chat, with its id, sender and entities.
func WithRawFields(fields map[string]json.RawMessage) UserOption {
	return func(u *userMsg) { u.rawFields = fields }
}

// InjectRawUpdate queues {"update_id":N,"<kind>":payload} with payload sent
// verbatim, and returns N. It touches no chat and ignores allowed_updates,
// as a server may send kinds the bot did not ask for. An invalid JSON
// payload fails the test.
func (s *Server) InjectRawUpdate(kind string, payload json.RawMessage) UpdateID {
	s.t.Helper()
	return s.InjectRaw(kind, func(id UpdateID) json.RawMessage {
		k, _ := json.Marshal(kind)
		return json.RawMessage(fmt.Sprintf(`{"update_id":%d,%s:%s}`, id, k, payload))
	})
}

// InjectRaw queues the getUpdates entry build returns for the id the fake
// assigns, verbatim: it may lack an update_id, carry another one, or not be
// an object at all. The assigned id still places the entry in the queue, so
// a poll whose offset passes it confirms it. kind is only what snapshots
// report. Invalid JSON fails the test.
func (s *Server) InjectRaw(kind string, build func(id UpdateID) json.RawMessage) UpdateID {
	s.t.Helper()
	s.mu.Lock()
	id, err := s.enqueueRawLocked(kind, build, Update{})
	s.mu.Unlock()
	if err != nil {
		s.t.Fatalf("telegramtest: InjectRaw: %v", err)
	}
	return id
}

// withFields returns a builder of the update carrying w with fields merged
// into it.
func withFields(w *wireMessage, fields map[string]json.RawMessage) (func(UpdateID) json.RawMessage, error) {
	base, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("encode message: %w", err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(base, &members); err != nil {
		return nil, fmt.Errorf("decode message: %w", err)
	}
	for k, v := range fields {
		if !json.Valid(v) {
			return nil, fmt.Errorf("raw field %q is not valid JSON: %.200s", k, v)
		}
		members[k] = v
	}
	msg, err := json.Marshal(members)
	if err != nil {
		return nil, fmt.Errorf("encode message: %w", err)
	}
	return func(id UpdateID) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"update_id":%d,"message":%s}`, id, msg))
	}, nil
}
