package telegramtest

import "context"

// pinChatMessage pins a message ([Message].Pinned). In a private chat a
// bot may always pin; in a group only an administrator with the right to
// pin ([Chat].BotCanPin), and Telegram's refusal otherwise is "not enough
// rights to manage pinned messages in the chat".
func (s *Server) pinChatMessage(_ context.Context, p params) (any, *apiError) {
	return s.setPinned(p, true)
}

// unpinChatMessage unpins a message, under the same rights.
func (s *Server) unpinChatMessage(_ context.Context, p params) (any, *apiError) {
	return s.setPinned(p, false)
}

func (s *Server) setPinned(p params, pinned bool) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, aerr := s.chatLocked(p)
	if aerr != nil {
		return nil, aerr
	}
	if c.Type != Private && !c.BotCanPin {
		return nil, badRequest("not enough rights to manage pinned messages in the chat")
	}
	id, aerr := messageIDParam(p)
	if aerr != nil {
		return nil, aerr
	}
	m := c.messages[id]
	if m == nil || m.Deleted {
		if pinned {
			return nil, badRequest("message to pin not found")
		}
		return nil, badRequest("message to unpin not found")
	}
	if aerr := s.checkFloodLocked(c, "pinChatMessage"); aerr != nil {
		return nil, aerr
	}
	m.Pinned = pinned
	s.bumpLocked()
	return true, nil
}
