// Package budget is what Claude costs and may cost: /usage, /budget, the
// budgets that refuse messages and cap each CLI's spending, and the
// subscription windows the CLI reports.
//
// Budgets ([budget] daily_usd, monthly_usd) count what every chat's turns
// cost, as the CLI reports it, per day and calendar month in the users'
// zone. Over a budget a new message is refused before it reaches Claude,
// and a CLI is started with what is left as --max-budget-usd, which caps
// that process's own spending. A process whose cap has become too small
// (the day rolled over, the operator raised the budget) is restarted before
// the next message; one whose cap is too generous because other chats spent
// meanwhile is not (a restart costs a cold start per message), so
// concurrent turns in several chats can overshoot a budget by what they
// spend at once, and the refusal of new messages then holds.
//
// A project may have a budget of its own ([projects.<name>.budget],
// projects.go), which counts only the turns run in it: the global budget
// still caps everything, the project's caps the project further. Where a
// chat works decides which apply: its messages are refused when either is
// used up, and its CLI's cap is the smaller of what is left.
//
// The turns budgets and /usage count are the engine's records (chat's
// turn_costs.go): every turn, typed or not, including the turns of a
// session the chat let go of and an estimate for one whose CLI died.
package budget
