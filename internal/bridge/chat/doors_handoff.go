package chat

// Doors: handing a session between the phone and a terminal (the places
// module's handoff).

// ReopenSession lets go of the chat's live CLI and keeps its session, as a
// switch of place and back would: the CLI is closed off the actor (its
// approvals withdrawn, its background work ended and said so), and the
// next message resumes the session of the chat's place in a new CLI, which
// reads the session's transcript afresh. The places module uses it when a
// terminal added turns to the session, before the message that goes on
// with them.
func (c *Chat) ReopenSession(why string) { c.dropSession(why) }
