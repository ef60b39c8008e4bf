package telegramtest

import (
	"context"
	"sort"
	"time"
)

// DraftLifetime is how long a draft stays on screen without an update.
// Telegram documents drafts only as a preview of about 30 seconds.
const DraftLifetime = 30 * time.Second

// sendMessageDraft streams a partial message to a private chat (Bot API
// 9.3; open to every bot since 9.5). What the fake models:
//
//   - private chats only: elsewhere Telegram answers 400
//     TEXTDRAFT_PEER_INVALID, as bots report from groups;
//   - a draft_id that is a non-zero integer, and text that is not empty
//     (the docs once allowed "", Telegram answers "text must be non-empty");
//   - ephemeral and latest wins: a chat (or topic) shows one draft, the
//     latest call's, until a bot message replaces it, a chat action
//     replaces it (drafts travel to clients as a chat action), or
//     DraftLifetime passes without an update. [Server.ShownDraft] is what
//     the user sees; [Server.Drafts] lists every accepted call;
//   - drafts do not spend the flood windows of sends and edits, but a chat
//     under a flood penalty refuses them like every other method.
func (s *Server) sendMessageDraft(_ context.Context, p params) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, aerr := s.chatLocked(p)
	if aerr != nil {
		return nil, aerr
	}
	if c.Type != Private {
		return nil, badRequest("TEXTDRAFT_PEER_INVALID")
	}
	th, aerr := threadLocked(c, p)
	if aerr != nil {
		return nil, aerr
	}
	draftID, _, err := p.int64("draft_id")
	if err != nil || draftID == 0 {
		return nil, badRequest("draft_id must be a non-zero integer")
	}
	text, ents, aerr := s.parsed(p.str("text"), p.str("parse_mode"), p, "entities")
	switch {
	case aerr != nil:
		return nil, aerr
	case text == "":
		return nil, badRequest("text must be non-empty")
	case utf16Len(text) > MaxTextLen:
		return nil, badRequest("message is too long")
	}
	if aerr := s.checkFloodLocked(c, "sendMessageDraft"); aerr != nil {
		return nil, aerr
	}
	d := Draft{Chat: c.ID, Thread: th, DraftID: draftID, Text: text, Entities: ents, Time: s.now()}
	s.drafts = append(s.drafts, d)
	if c.drafts == nil {
		c.drafts = map[ThreadID]Draft{}
	}
	c.drafts[th] = d
	s.bumpLocked()
	return true, nil
}

// ShownDraft returns the draft the user sees in chat (and topic thread, 0
// for none), if any.
func (sn *Snapshot) ShownDraft(chat ChatID, thread ThreadID) (Draft, bool) {
	for _, d := range sn.ShownDrafts {
		if d.Chat == chat && d.Thread == thread {
			return d, true
		}
	}
	return Draft{}, false
}

// ShownDraft is shorthand for Snapshot().ShownDraft(chat, thread).
func (s *Server) ShownDraft(chat ChatID, thread ThreadID) (Draft, bool) {
	return s.Snapshot().ShownDraft(chat, thread)
}

func (s *Server) shownDraftsLocked() []Draft {
	now := s.now()
	var out []Draft
	for _, c := range s.chats {
		for _, d := range c.drafts {
			if now.Before(d.Time.Add(DraftLifetime)) {
				out = append(out, d)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Chat != out[j].Chat {
			return out[i].Chat < out[j].Chat
		}
		return out[i].Thread < out[j].Thread
	})
	return out
}
