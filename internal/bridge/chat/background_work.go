package chat

import (
	"fmt"

	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// workStopped tells the chat what a CLI that had to close (/new, a project
// or branch switch, a restart, a crash) still had running between turns
// when its close began (runner.Session.Pending, ProcessExited.Pending): its
// background tasks stopped with it, and the modules' hooks hear of the
// rest (its wake-ups: modules/wakeups). A CLI is never closed for
// idleness or evicted while it has such work (runner/background.go); these
// are the closes the user or the operator asked for, and crashes.
func (c *Chat) workStopped(why string, session runner.SessionID, pl Place, work runner.Background) {
	if work.Empty() {
		return
	}
	if work.Tasks > 0 {
		c.reply("🧵 Claude's process was closed ("+render.EscapeHTML(why)+") while it still had work in the background: "+
			taskCount(work.Tasks)+" stopped with it. Ask Claude to start it again if you still need it.", 0)
	}
	w := StoppedWork{Why: why, Session: string(session), Place: pl, Work: work}
	for _, h := range c.b.reg.onStopped {
		h(c, w)
	}
}

func taskCount(n int) string {
	if n == 1 {
		return "its background task"
	}
	return fmt.Sprintf("its %d background tasks", n)
}
