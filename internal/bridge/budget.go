package bridge

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

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

// minCap is what a CLI gets when nothing is left: --max-budget-usd 0 would
// mean no cap at all. Such a CLI refuses every turn, and is restarted with a
// real cap when the budget resets.
const minCap = 0.0001

// budgetState is where the budgets stand.
type budgetState struct {
	limits       []render.BudgetLimit
	today, month float64
	warnAt       float64
	zone         string
	now          time.Time // in the users' zone
}

// enabled reports whether any budget is set.
func (s budgetState) enabled() bool { return len(s.limits) > 0 }

// remaining is what may still be spent before the first budget runs out
// (+Inf without budgets), and that budget.
func (s budgetState) remaining() (float64, render.BudgetLimit) {
	left, by := math.Inf(1), render.BudgetLimit{}
	for _, l := range s.limits {
		if r := l.LimitUSD - l.SpentUSD; r < left {
			left, by = r, l
		}
	}
	return max(left, 0), by
}

// budget reads where the budgets stand now.
func (b *Bridge) budget(ctx context.Context) (budgetState, error) {
	cfg := b.Config()
	loc := cfg.Telegram.Location()
	now := b.now().In(loc)
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, loc)
	st := budgetState{warnAt: cfg.Budget.WarnAt, zone: zoneName(cfg.Telegram.Timezone), now: now}
	var err error
	if st.today, err = b.store.CostSince(ctx, day); err != nil {
		return st, err
	}
	if st.month, err = b.store.CostSince(ctx, month); err != nil {
		return st, err
	}
	if usd := cfg.Budget.DailyUSD; usd > 0 {
		st.limits = append(st.limits, render.BudgetLimit{Period: "daily", LimitUSD: usd, SpentUSD: st.today, ResetsAt: day.AddDate(0, 0, 1)})
	}
	if usd := cfg.Budget.MonthlyUSD; usd > 0 {
		st.limits = append(st.limits, render.BudgetLimit{Period: "monthly", LimitUSD: usd, SpentUSD: st.month, ResetsAt: month.AddDate(0, 1, 0)})
	}
	return st, nil
}

// zoneName names the users' zone for headers.
func zoneName(tz string) string {
	if tz == "" {
		return "the host's time zone"
	}
	return tz
}

// budgetCap is asked by the runner at each spawn of the chat's CLI: what
// is left of the budgets, 0 (no cap) without budgets.
func (c *chat) budgetCap() float64 {
	cap := 0.0
	if st, err := c.b.budget(c.ctx()); err != nil {
		c.log.Error().Err(err).Msg("read budgets for the CLI's spending cap")
	} else if st.enabled() {
		left, _ := st.remaining()
		cap = max(left, minCap)
	}
	c.away.spawnCap.Store(math.Float64bits(cap))
	return cap
}

// startedProcess notes the cap the chat's new CLI runs with.
func (c *chat) startedProcess() {
	c.away.procCap = math.Float64frombits(c.away.spawnCap.Load())
	c.away.procCapped = c.away.procCap > 0
	c.away.procSpent = 0
}

// withinBudget decides whether a message may start Claude's work: over a budget
// it is refused (and the user told when the budget resets). If the live
// CLI's cap no longer fits the budgets, the message restarts it first.
func (c *chat) withinBudget(o *outgoing) bool {
	if !c.b.Config().Budget.Enabled() && !c.away.procCapped {
		return true
	}
	st, err := c.b.budget(c.ctx())
	if err != nil {
		c.log.Error().Err(err).Msg("read budgets; the message goes through")
		return true
	}
	if refusal := render.BudgetRefusal(st.limits, st.now); refusal != "" {
		c.reply(refusal, o.msgID)
		c.log.Info().Msg("refused a message over budget")
		return false
	}
	if c.staleCap(st) {
		o.restart = func(ctx context.Context, sess *runner.Session) {
			c.log.Info().Msg("restarting the CLI so its spending cap fits the budget")
			if err := sess.CloseProcess(ctx); err != nil {
				c.log.Warn().Err(err).Msg("restart the CLI for a new spending cap")
			}
		}
	}
	return true
}

// staleCap reports whether the live, idle CLI should be restarted for a new
// cap: it has none while a budget is set, one while none is, or clearly
// less than the budgets now allow.
func (c *chat) staleCap(st budgetState) bool {
	if c.sess == nil || c.sess.State() != runner.StateIdle || c.sends.inFlight != nil || len(c.sends.queue) > 0 || len(c.inputs) > 0 {
		return false
	}
	if !st.enabled() {
		return c.away.procCapped
	}
	if !c.away.procCapped {
		return true
	}
	want, _ := st.remaining()
	have := c.away.procCap - c.away.procSpent
	return want-have > want*0.05
}

// budgetNotes are the answer's budget lines: why the CLI stopped the turn
// if its cap did, else a warning the first time a budget passes warn_at in
// its day or month (and again the first time it is used up).
func (c *chat) budgetNotes(tc runner.TurnCompleted) []string {
	if !c.b.Config().Budget.Enabled() {
		return nil
	}
	st, err := c.b.budget(c.ctx())
	if err != nil {
		c.log.Error().Err(err).Msg("read budgets for the answer")
		return nil
	}
	if strings.HasPrefix(tc.Subtype, "error_max_budget") {
		_, by := st.remaining()
		return []string{render.BudgetStopped(c.away.procCap, by, st.now)}
	}
	var out []string
	for _, l := range st.limits {
		l.SpentUSD += tc.CostUSD // the turn is recorded after its answer
		if l.Share() < st.warnAt {
			continue
		}
		mark := "warn"
		if l.Over() {
			mark = "over"
		}
		// Once per period and mark, across restarts and chats.
		period := l.ResetsAt.Format(time.DateOnly)
		if changed, err := c.b.store.SwapSetting(c.ctx(), "budget-warned-"+l.Period, period+"/"+mark); err != nil {
			c.log.Error().Err(err).Msg("remember a budget warning")
		} else if changed {
			out = append(out, render.BudgetWarning(l, st.now))
		}
	}
	return out
}

// showBudget answers /budget.
func (c *chat) showBudget(replyTo int) {
	st, err := c.b.budget(c.ctx())
	if err != nil {
		c.reply("⚠️ Could not read the budgets: "+render.EscapeHTML(err.Error()), replyTo)
		return
	}
	left, _ := st.remaining()
	c.reply(render.RenderBudget(render.BudgetReport{Now: st.now, Zone: st.zone, WarnAt: st.warnAt, Limits: st.limits,
		Today: st.today, Month: st.month, Cap: left}), replyTo)
}
