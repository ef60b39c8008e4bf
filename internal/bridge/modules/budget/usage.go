package budget

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// usageChartDays is how many days /usage charts.
const usageChartDays = 14

// showUsage answers /usage from the turns table and the last known
// subscription windows.
func (m *Module) showUsage(c *chat.Chat, replyTo int) {
	cfg := c.Config()
	loc := cfg.Telegram.Location()
	now := m.host.Now().In(loc)
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	week := today.AddDate(0, 0, -6)
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, loc)
	chartFrom := today.AddDate(0, 0, -(usageChartDays - 1))
	since := chartFrom
	if month.Before(since) {
		since = month
	}
	turns, err := m.store.TurnsSince(c.Ctx(), since)
	if err != nil {
		c.Reply("⚠️ Could not read the turns: "+render.EscapeHTML(err.Error()), replyTo)
		return
	}
	r := render.UsageReport{Now: now, Zone: render.ZoneName(cfg.Telegram.Timezone), Periods: []render.UsagePeriod{
		usagePeriod("Today", turns, today, c.Key()),
		usagePeriod("Last 7 days", turns, week, c.Key()),
		usagePeriod("This month", turns, month, c.Key()),
	}}
	for d := range usageChartDays {
		day := render.UsageDay{Day: chartFrom.AddDate(0, 0, d)}
		end := day.Day.AddDate(0, 0, 1)
		for _, t := range turns {
			if !t.StartedAt.Before(day.Day) && t.StartedAt.Before(end) {
				day.CostUSD += t.CostUSD
				day.Turns++
			}
		}
		r.Days = append(r.Days, day)
	}
	ws, err := m.store.LimitWindows(c.Ctx())
	if err != nil {
		c.Log().Error().Err(err).Msg("read subscription windows")
	}
	for _, w := range ws {
		r.Windows = append(r.Windows, render.UsageWindow{Type: w.Type, Status: w.Status, Utilization: w.Utilization,
			ResetsAt: w.ResetsAt.In(loc)})
		if w.UpdatedAt.After(r.WindowsAt) {
			r.WindowsAt = w.UpdatedAt.In(loc)
		}
	}
	c.Reply(render.RenderUsage(r), replyTo)
}

// usagePeriod totals the turns since from, in all and per chat (the most
// expensive first, this chat first among equals).
func usagePeriod(title string, turns []state.TurnRecord, from time.Time, self state.ChatKey) render.UsagePeriod {
	p := render.UsagePeriod{Title: title}
	byChat := map[state.ChatKey]*render.UsageChat{}
	var keys []state.ChatKey
	for _, t := range turns {
		if t.StartedAt.Before(from) {
			continue
		}
		p.Total.Add(t.CostUSD, t.InputTokens, t.OutputTokens)
		u := byChat[t.Key]
		if u == nil {
			u = &render.UsageChat{Label: chatKeyLabel(t.Key, self)}
			byChat[t.Key] = u
			keys = append(keys, t.Key)
		}
		u.Add(t.CostUSD, t.InputTokens, t.OutputTokens)
	}
	slices.SortStableFunc(keys, func(a, b state.ChatKey) int {
		if d := cmp.Compare(byChat[b].CostUSD, byChat[a].CostUSD); d != 0 {
			return d
		}
		return cmp.Compare(b2i(b == self), b2i(a == self))
	})
	for _, k := range keys {
		p.Chats = append(p.Chats, *byChat[k])
	}
	return p
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// onRateLimit records the subscription windows a rate_limit_event reports
// (they are the account's, shared by every chat).
func (m *Module) onRateLimit(c *chat.Chat, e runner.RateLimit) {
	now := m.host.Now()
	ws := make([]state.LimitWindow, 0, len(e.Windows)+1)
	top := -1
	for _, w := range e.Windows {
		if w.Type == e.WindowType {
			top = len(ws)
		}
		ws = append(ws, state.LimitWindow{Type: w.Type, Status: w.Status, Utilization: w.Utilization, ResetsAt: w.ResetsAt, UpdatedAt: now})
	}
	// The top-level status is rateLimitType's window's, and wins there
	// (a rejection can come with no per-window detail at all).
	switch {
	case e.WindowType == "":
	case top < 0:
		ws = append(ws, state.LimitWindow{Type: e.WindowType, Status: e.Status, Utilization: e.Utilization, ResetsAt: e.ResetsAt, UpdatedAt: now})
	case e.Status == "rejected" || ws[top].Status == "":
		ws[top].Status = e.Status
		if ws[top].ResetsAt.IsZero() {
			ws[top].ResetsAt = e.ResetsAt
		}
	}
	if err := m.store.PutLimitWindows(c.Ctx(), ws); err != nil {
		c.Log().Error().Err(err).Msg("record subscription windows")
	}
}

// windowWarning is the answer's line about a subscription window at 70 %
// or more. Windows that warn or reject by their own status are left out:
// the answer's "what happened" block already shows those.
func (m *Module) windowWarning(c *chat.Chat) string {
	ws, err := m.store.LimitWindows(c.Ctx())
	if err != nil {
		c.Log().Error().Err(err).Msg("read subscription windows")
		return ""
	}
	loc := c.Config().Telegram.Location()
	var quiet []render.UsageWindow
	for _, w := range ws {
		if w.Status == "" || w.Status == "allowed" {
			quiet = append(quiet, render.UsageWindow{Type: w.Type, Utilization: w.Utilization, ResetsAt: w.ResetsAt.In(loc)})
		}
	}
	return render.WindowWarning(quiet, m.host.Now().In(loc))
}

// chatKeyLabel names a chat in /usage: "this chat", "chat 42 · topic 7".
func chatKeyLabel(key, self state.ChatKey) string {
	if key == self {
		if key.Thread != 0 {
			return "this topic"
		}
		return "this chat"
	}
	s := "chat " + strconv.FormatInt(int64(key.Chat), 10)
	if key.Thread != 0 {
		s += " · topic " + strconv.Itoa(int(key.Thread))
	}
	return s
}
