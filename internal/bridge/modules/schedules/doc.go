// Package schedules sends prompts nobody typed just now: /at runs a prompt
// once, /every on a cron schedule, [[schedules]] in the config file too,
// and a prompt a subscription limit rejected goes again when the limit
// resets (limitretry.go). /schedules lists the chat's schedules with 🗑
// Delete buttons and pauses or resumes them all.
//
// One scheduler goroutine (the module's Start, scheduler.go) keeps no
// timers of its own: schedules and retries live in the state store, it
// sleeps until the earliest is due (or something changed), claims each due
// one there (so a run happens once even across a crash), and hands it to
// its chat's actor, where it goes like a message from the user: budgets,
// the permission mode and approvals apply, and its progress and answer say
// "⏰ scheduled". A run waits for a busy chat, and for an album or forwards
// the chat is collecting, and goes after the runs (and webhook runs) that came before it
// (chat.WaitQueue); a claimed run stays pending in the store until
// its prompt reached the CLI, so a restart meanwhile runs it after all
// (pending.go). A [[schedules]] entry with a project first moves the chat
// there (projects.go); a retried prompt goes back to the project and
// branch it was rejected in (limitretry_projects.go). A run or retry goes
// only while its chat is served and the user it is from is still allowed,
// checked at every run. All of it goes by the Host's clock, which tests
// move ahead.
package schedules
