package metrics

import (
	"time"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/outbox"
)

// Answer latency is measured from the moment the bridge takes a turn's
// result (the first answer hook, before the answer is made) to the
// sendMessage call, among those Telegram accepted, that delivered the
// answer's first part: the outbox's queue, Telegram's pace, a 429's pause,
// retries. A result whose turn got no answer (a silent turn, or one a
// limit's notice answered) is matched with nothing: the next answer of
// the chat takes the latest result queued before it, and drops the older
// ones. The outbox sends a chat's messages in order, so the parts of one
// answer, and the answers of two turns, cannot overtake each other.

// maxResults bounds the results a chat keeps waiting for an answer.
const maxResults = 16

// tookResult notes that the bridge took a turn's result now.
func (m *Module) tookResult(c *chat.Chat) {
	k := outKey(c)
	m.mu.Lock()
	defer m.mu.Unlock()
	rs := append(m.results[k], time.Now())
	if len(rs) > maxResults {
		rs = rs[len(rs)-maxResults:]
	}
	m.results[k] = rs
}

// delivered sees every call Telegram accepted (an outbox goroutine).
func (m *Module) delivered(d outbox.Dispatch) {
	switch d.Tag {
	case chat.TagAnswer:
		if d.Kind != "send" {
			return
		}
		if took, ok := m.answerOf(d); ok {
			m.m.AnswerLatency(d.Sent.Sub(took))
		}
	case chat.TagProgress:
		m.mu.Lock()
		last, ok := m.shown[d.Key]
		m.shown[d.Key] = d.Sent
		if d.Kind == "delete" {
			delete(m.shown, d.Key)
		}
		m.mu.Unlock()
		if ok && d.Kind == "edit" {
			m.m.ProgressStaleness(d.Sent.Sub(last))
		}
	}
}

// answerOf takes the result an answer part answers: the latest one taken
// before the part was queued. A later part of the same answer finds none.
func (m *Module) answerOf(d outbox.Dispatch) (took time.Time, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rs := m.results[d.Key]
	n := 0
	for n < len(rs) && !rs[n].After(d.Queued) {
		took, ok = rs[n], true
		n++
	}
	if n == len(rs) {
		delete(m.results, d.Key)
	} else {
		m.results[d.Key] = rs[n:]
	}
	return took, ok
}

func outKey(c *chat.Chat) outbox.ChatKey {
	k := c.Key()
	return outbox.ChatKey{Chat: int64(k.Chat), Thread: int(k.Thread)}
}
