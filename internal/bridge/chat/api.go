package chat

import "github.com/untether/untether/internal/bridge/state"

// The doors of a chat that modules use. Every method runs on the chat's
// actor (inside a hook, a command, a press, or work posted back with
// Post), unless its comment says otherwise.

// Key is the chat (and forum topic) this actor serves.
func (c *Chat) Key() state.ChatKey { return c.key }

// TurnRunning reports whether a turn is running.
func (c *Chat) TurnRunning() bool { return c.turn != nil && !c.turn.done }

// AddTurnNote adds a line to the running turn's notes, shown in its
// progress message and above its answer's footer; without a running turn
// it does nothing.
func (c *Chat) AddTurnNote(note string) {
	if c.TurnRunning() {
		c.turn.notes = append(c.turn.notes, note)
	}
}
