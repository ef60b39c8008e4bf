package chat

import (
	"context"

	"github.com/untether/untether/internal/runner"
)

// Doors: handing a session between the phone and a terminal (the places
// module's handoff).

// CheckFirst adds check to what the hand-over runs off the actor before it
// writes the message, after what was set before it (RestartFirst, an
// earlier CheckFirst), with the session the message goes to: the places
// module reads the session's transcript there and restarts the CLI when a
// terminal added turns to it. Like RestartFirst it runs only for a message
// a gate let through, and before a CLI is started for it, if none runs.
func (o *Outgoing) CheckFirst(check func(ctx context.Context, sess *runner.Session)) {
	prev := o.restart
	if prev == nil {
		o.restart = check
		return
	}
	o.restart = func(ctx context.Context, sess *runner.Session) {
		prev(ctx, sess)
		check(ctx, sess)
	}
}
