package config

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/untether/untether/internal/cronspec"
)

// validateAway checks the keys for working away from the keyboard: the time
// zone, budgets, retries after a subscription limit and scheduled prompts.
func (c *Config) validateAway(ps *problems) {
	timezone(ps, "telegram.timezone", c.Telegram.Timezone)
	oneOf(ps, "claude.retry_after_limit", c.Claude.RetryAfterLimit, RetryAfterLimitValues)

	nonNegative(ps, "budget.daily_usd", c.Budget.DailyUSD)
	nonNegative(ps, "budget.monthly_usd", c.Budget.MonthlyUSD)
	if v := c.Budget.UnreportedTurnUSD; v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		ps.add("budget.unreported_turn_usd", "is %v; must be 0 (such turns count as free) or more", v)
	}
	if w := c.Budget.WarnAt; !(w > 0 && w <= 1) {
		ps.add("budget.warn_at", "is %v; must be a share of the budget above 0 and at most 1 (0.8 warns at 80 %%)", w)
	}

	atLeastOne(ps, "scheduler.max_per_chat", c.Scheduler.MaxPerChat)
	for i, s := range c.Schedules {
		c.validateSchedule(ps, "schedules["+strconv.Itoa(i)+"]", s)
	}
}

func (c *Config) validateSchedule(ps *problems, key string, s Schedule) {
	c.validateTarget(ps, key, target{chat: s.Chat, thread: s.Thread, project: s.Project, chatKey: "chat", threadKey: "thread"})
	if _, err := cronspec.Parse(s.Cron); err != nil {
		ps.add(key+".cron", "%v; write five fields such as \"0 9 * * 1-5\" or a descriptor such as \"@daily\"", err)
	}
	if strings.TrimSpace(s.Prompt) == "" {
		ps.add(key+".prompt", "required: the message to send to Claude")
	}
	timezone(ps, key+".timezone", s.Timezone)
}

// target is where a prompt from the file runs: a [[schedules]] or a
// [[triggers]] entry's chat, topic and project, and the names of its keys.
type target struct {
	chat, thread       int64
	project            string
	chatKey, threadKey string
}

// validateTarget: the chat must be one untether serves, and the project,
// when set, must exist and allow that chat.
func (c *Config) validateTarget(ps *problems, key string, t target) {
	switch chatKey := key + "." + t.chatKey; {
	case t.chat == 0:
		ps.add(chatKey, "required: the chat id (your user id for your private chat, or a group's negative id)")
	case t.chat > 0 && !c.Telegram.AllowAnyUser && !slices.Contains(c.Telegram.AllowedUserIDs, t.chat):
		ps.add(chatKey, "is %d, a private chat, but that user is not in telegram.allowed_user_ids", t.chat)
	case t.chat < 0 && !slices.Contains(c.Telegram.AllowedChatIDs, t.chat):
		ps.add(chatKey, "is %d, a group, but it is not in telegram.allowed_chat_ids", t.chat)
	}
	if t.thread < 0 {
		ps.add(key+"."+t.threadKey, "is %d; a forum topic id is positive (0: no topic)", t.thread)
	}
	if t.project != "" {
		switch p, ok := c.Project(t.project); {
		case !ok:
			ps.add(key+".project", "is %q, which is not a project; one of %s, or empty for wherever the chat works", t.project, strings.Join(c.ProjectNames(), ", "))
		case t.chat != 0 && !p.ChatAllowed(t.chat):
			ps.add(key+".project", "is %q, whose allowed_chat_ids do not list chat %d", p.Name, t.chat)
		}
	}
}

func timezone(ps *problems, key, name string) {
	if name == "" {
		return
	}
	if _, err := time.LoadLocation(name); err != nil || strings.EqualFold(name, "local") {
		ps.add(key, "is %q, not a time zone name; use an IANA name such as \"Europe/Paris\", or leave it empty for the host's", name)
	}
}

func nonNegative(ps *problems, key string, v float64) {
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		ps.add(key, "is %v; must be 0 (no budget) or more", v)
	}
}
