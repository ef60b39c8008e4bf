package chat

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/config"
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
//
// A project may have a budget of its own ([projects.<name>.budget],
// budget_projects.go), which counts only the turns run in it: the global
// budget still caps everything, the project's caps the project further.
// Where a chat works decides which apply: its messages are refused when
// either is used up, and its CLI's cap is the smaller of what is left.

// minCap is what a CLI gets when nothing is left: --max-budget-usd 0 would
// mean no cap at all. Such a CLI refuses every turn, and is restarted with a
// real cap when the budget resets.
const minCap = 0.0001

// budgetState is where the budgets that apply to one project stand: the
// global ones, then the project's own.
type budgetState struct {
	limits       []render.BudgetLimit
	today, month float64
	warnAt       float64
	// project is the project asked about; projWarnAt its own warn_at.
	project    string
	projWarnAt float64
	zone       string
	now        time.Time // in the users' zone
}

// warnAtFor is the share at which l warns.
func (s budgetState) warnAtFor(l render.BudgetLimit) float64 {
	if l.Project != "" {
		return s.projWarnAt
	}
	return s.warnAt
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

// budget reads where the budgets that apply to project stand now ("": the
// global ones only).
func (b *Engine) budget(ctx context.Context, project string) (budgetState, error) {
	cfg := b.Config()
	now, day, month := b.budgetPeriods(cfg)
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
	return st, b.addProjectBudget(ctx, cfg, &st, project) // budget_projects.go
}

// budgetPeriods are now, and the starts of today and this month, in the
// users' zone.
func (b *Engine) budgetPeriods(cfg *config.Config) (now, day, month time.Time) {
	loc := cfg.Telegram.Location()
	now = b.now().In(loc)
	day = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	month = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, loc)
	return now, day, month
}

// zoneName names the users' zone for headers.
func zoneName(tz string) string {
	if tz == "" {
		return "the host's time zone"
	}
	return tz
}

// budgetCap is asked by the runner at each spawn of the chat's CLI in
// project: what is left of the budgets that apply there, 0 (no cap)
// without budgets.
func (c *Chat) budgetCap(ctx context.Context, log zerolog.Logger, project string) float64 {
	cap := 0.0
	if st, err := c.b.budget(ctx, project); err != nil {
		log.Error().Err(err).Msg("read budgets for the CLI's spending cap")
	} else if st.enabled() {
		left, _ := st.remaining()
		cap = max(left, minCap)
	}
	c.away.spawnCap.Store(math.Float64bits(cap))
	return cap
}

// startedProcess notes the cap the chat's new CLI runs with.
func (c *Chat) startedProcess() {
	c.away.procCap = math.Float64frombits(c.away.spawnCap.Load())
	c.away.procCapped = c.away.procCap > 0
	c.away.procSpent = 0
}

// withinBudget decides whether a message may start Claude's work: over a budget
// it is refused (and the user told when the budget resets). If the live
// CLI's cap no longer fits the budgets, the message restarts it first.
func (c *Chat) withinBudget(o *outgoing) bool {
	cfg := c.b.Config()
	project := c.projectFor(cfg).Name
	if !budgetsApply(cfg, project) && !c.away.procCapped {
		return true
	}
	st, err := c.b.budget(c.ctx(), project)
	if err != nil {
		c.log.Error().Err(err).Msg("read budgets; the message goes through")
		return true
	}
	if refusal := render.BudgetRefusal(st.limits, st.now); refusal != "" {
		c.reply(refusal, o.msgID)
		c.log.Info().Str("project", project).Msg("refused a message over budget")
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
func (c *Chat) staleCap(st budgetState) bool {
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
func (c *Chat) budgetNotes(tc runner.TurnCompleted) []string {
	project := c.sessPlace.Project // where the turn ran
	if !budgetsApply(c.b.Config(), project) {
		return nil
	}
	st, err := c.b.budget(c.ctx(), project)
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
		if l.Share() < st.warnAtFor(l) {
			continue
		}
		mark := "warn"
		if l.Over() {
			mark = "over"
		}
		// Once per budget, period and mark, across restarts and chats.
		period := l.ResetsAt.Format(time.DateOnly)
		if changed, err := c.b.store.SwapSetting(c.ctx(), warnedSetting(l), period+"/"+mark); err != nil {
			c.log.Error().Err(err).Msg("remember a budget warning")
		} else if changed {
			out = append(out, render.BudgetWarning(l, st.now))
		}
	}
	return out
}

// showBudget answers /budget: the global budgets, each project's own, and
// what they mean for the chat's project.
func (c *Chat) showBudget(replyTo int) {
	cfg := c.b.Config()
	here := c.projectFor(cfg).Name
	st, err := c.b.budget(c.ctx(), here)
	var projects []render.ProjectBudget
	if err == nil {
		projects, err = c.b.projectBudgets(c.ctx(), cfg) // budget_projects.go
	}
	if err != nil {
		c.reply("⚠️ Could not read the budgets: "+render.EscapeHTML(err.Error()), replyTo)
		return
	}
	left, _ := st.remaining()
	var global []render.BudgetLimit
	for _, l := range st.limits {
		if l.Project == "" {
			global = append(global, l)
		}
	}
	c.reply(render.RenderBudget(render.BudgetReport{Now: st.now, Zone: st.zone, WarnAt: st.warnAt, Limits: global,
		Today: st.today, Month: st.month, Cap: left, Projects: projects, Here: here}), replyTo)
}

// Register adds /usage and /budget.
func (m budgetModule) Register(r *Registry) {
	r.Command(Command{Name: "usage", Help: "What Claude cost, and the subscription limits",
		Run: func(c *Chat, in Invocation) { c.showUsage(in.Msg.ID) }})
	r.Command(Command{Name: "budget", Help: "Spending against the budgets",
		Run: func(c *Chat, in Invocation) { c.showBudget(in.Msg.ID) }})
	r.OnEvent(func(c *Chat, ev runner.Event) {
		switch e := ev.(type) {
		case runner.ProcessStarted:
			c.startedProcess()
			if c.book != nil { // turn_costs.go: a crash is charged within the cap
				c.book.setCap(c.away.procCapped, c.away.procCap)
			}
		case runner.RateLimit:
			c.onRateLimit(e) // usage.go
		case runner.TurnCompleted:
			c.away.procSpent += e.CostUSD
		}
	})
	r.AnswerNotes(func(c *Chat, tc runner.TurnCompleted) []string { return c.budgetNotes(tc) })
	r.AnswerNotes(func(c *Chat, _ runner.TurnCompleted) []string {
		if w := c.windowWarning(); w != "" { // usage.go
			return []string{w}
		}
		return nil
	})
	r.OnSend(func(c *Chat, o *outgoing) bool { return c.withinBudget(o) })
	r.OnSpawn(func(c *Chat, rc *runner.Config, pl Place) {
		// The runner asks for the cap on its own goroutine: the context
		// and logger are taken here, on the actor.
		ctx, log := c.ctx(), c.log
		rc.MaxBudgetUSD = func() float64 { return c.budgetCap(ctx, log, pl.Project) }
	})
}
