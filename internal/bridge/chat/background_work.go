package chat

import (
	"fmt"
	"time"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
)

// tellStoppedWork tells the chat what a CLI that had to close (/new, a
// project or branch switch, a restart) still had running between turns
// when its close began (runner.Session.Background): those background tasks
// stopped with it, and a pending wake-up will not fire. A CLI is never closed for idleness or
// evicted while it has such work (runner/background.go); these are the
// closes the user or the operator asked for.
func (c *Chat) tellStoppedWork(tasks int, wake time.Time) {
	if tasks == 0 && wake.IsZero() {
		return
	}
	var what string
	switch {
	case tasks > 0 && !wake.IsZero():
		what = fmt.Sprintf("%s stopped with it, and the wake-up set for %s will not fire", taskCount(tasks), c.userTime(wake))
	case tasks > 0:
		what = taskCount(tasks) + " stopped with it"
	default:
		what = "the wake-up set for " + c.userTime(wake) + " will not fire"
	}
	c.reply("🧵 Claude's process was closed while it still had work in the background: "+what+". Ask Claude to start it again if you still need it.", 0)
}

func taskCount(n int) string {
	if n == 1 {
		return "its background task"
	}
	return fmt.Sprintf("its %d background tasks", n)
}

// userTime is t as the chat's users read it ([telegram] timezone).
func (c *Chat) userTime(t time.Time) string {
	loc := config.LoadLocation(c.b.Config().Telegram.Timezone)
	return render.EscapeHTML(render.FormatWhen(t.In(loc), time.Now()))
}
