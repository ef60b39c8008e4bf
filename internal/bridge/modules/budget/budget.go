package budget

import (
	"context"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// Package budget is what Claude costs and may cost: /usage, /budget, the
// budgets that refuse messages and cap each CLI's spending, and the
// subscription windows the CLI reports.
//
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
func (m *Module) budget(ctx context.Context, project string) (budgetState, error) {
	cfg := m.host.Config()
	now, day, month := m.budgetPeriods(cfg)
	st := budgetState{warnAt: cfg.Budget.WarnAt, zone: render.ZoneName(cfg.Telegram.Timezone), now: now}
	var err error
	if st.today, err = m.store.CostSince(ctx, day); err != nil {
		return st, err
	}
	if st.month, err = m.store.CostSince(ctx, month); err != nil {
		return st, err
	}
	if usd := cfg.Budget.DailyUSD; usd > 0 {
		st.limits = append(st.limits, render.BudgetLimit{Period: "daily", LimitUSD: usd, SpentUSD: st.today, ResetsAt: day.AddDate(0, 0, 1)})
	}
	if usd := cfg.Budget.MonthlyUSD; usd > 0 {
		st.limits = append(st.limits, render.BudgetLimit{Period: "monthly", LimitUSD: usd, SpentUSD: st.month, ResetsAt: month.AddDate(0, 1, 0)})
	}
	return st, m.addProjectBudget(ctx, cfg, &st, project) // projects.go
}

// budgetPeriods are now, and the starts of today and this month, in the
// users' zone.
func (m *Module) budgetPeriods(cfg *config.Config) (now, day, month time.Time) {
	loc := cfg.Telegram.Location()
	now = m.host.Now().In(loc)
	day = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	month = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, loc)
	return now, day, month
}

// budgetCap is asked by the runner at each spawn of the chat's CLI in
// project: what is left of the budgets that apply there, 0 (no cap)
// without budgets.
func (m *Module) budgetCap(ctx context.Context, proc *process, project string) float64 {
	cap := 0.0
	if st, err := m.budget(ctx, project); err != nil {
		zerolog.Ctx(ctx).Error().Err(err).Msg("read budgets for the CLI's spending cap")
	} else if st.enabled() {
		left, _ := st.remaining()
		cap = max(left, minCap)
	}
	proc.spawnCap.Store(math.Float64bits(cap))
	return cap
}

// started notes the cap the chat's new CLI runs with.
func (p *process) started() {
	p.procCap = math.Float64frombits(p.spawnCap.Load())
	p.procCapped = p.procCap > 0
	p.procSpent = 0
}

// withinBudget decides whether a message may start Claude's work: over a budget
// it is refused (and the user told when the budget resets). If the live
// CLI's cap no longer fits the budgets, the message restarts it first.
func (m *Module) withinBudget(c *chat.Chat, o *chat.Outgoing) bool {
	cfg := c.Config()
	project := c.Project(cfg).Name
	if !cfg.BudgetApplies(project) && !m.proc.Get(c).procCapped {
		return true
	}
	st, err := m.budget(c.Ctx(), project)
	if err != nil {
		c.Log().Error().Err(err).Msg("read budgets; the message goes through")
		return true
	}
	if refusal := render.BudgetRefusal(st.limits, st.now); refusal != "" {
		c.Reply(refusal, o.MsgID())
		c.Log().Info().Str("project", project).Msg("refused a message over budget")
		return false
	}
	if m.staleCap(c, st) {
		o.RestartFirst(func(ctx context.Context, sess *runner.Session) {
			zerolog.Ctx(ctx).Info().Msg("restarting the CLI so its spending cap fits the budget")
			if err := sess.CloseProcess(ctx); err != nil {
				zerolog.Ctx(ctx).Warn().Err(err).Msg("restart the CLI for a new spending cap")
			}
		})
	}
	return true
}

// staleCap reports whether the live, idle CLI should be restarted for a new
// cap: it has none while a budget is set, one while none is, or clearly
// less than the budgets now allow.
func (m *Module) staleCap(c *chat.Chat, st budgetState) bool {
	if !c.SessionIdle() {
		return false
	}
	if !st.enabled() {
		return m.proc.Get(c).procCapped
	}
	if !m.proc.Get(c).procCapped {
		return true
	}
	want, _ := st.remaining()
	have := m.proc.Get(c).procCap - m.proc.Get(c).procSpent
	return want-have > want*0.05
}

// budgetNotes are the answer's budget lines: why the CLI stopped the turn
// if its cap did, else a warning the first time a budget passes warn_at in
// its day or month (and again the first time it is used up).
func (m *Module) budgetNotes(c *chat.Chat, tc runner.TurnCompleted) []string {
	project := c.SessionPlace().Project // where the turn ran
	if !c.Config().BudgetApplies(project) {
		return nil
	}
	st, err := m.budget(c.Ctx(), project)
	if err != nil {
		c.Log().Error().Err(err).Msg("read budgets for the answer")
		return nil
	}
	if strings.HasPrefix(tc.Subtype, "error_max_budget") {
		_, by := st.remaining()
		return []string{render.BudgetStopped(m.proc.Get(c).procCap, by, st.now)}
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
		if changed, err := m.store.SwapSetting(c.Ctx(), warnedSetting(l), period+"/"+mark); err != nil {
			c.Log().Error().Err(err).Msg("remember a budget warning")
		} else if changed {
			out = append(out, render.BudgetWarning(l, st.now))
		}
	}
	return out
}

// showBudget answers /budget: the global budgets, each project's own, and
// what they mean for the chat's project.
func (m *Module) showBudget(c *chat.Chat, replyTo int) {
	cfg := c.Config()
	here := c.Project(cfg).Name
	st, err := m.budget(c.Ctx(), here)
	var projects []render.ProjectBudget
	if err == nil {
		projects, err = m.projectBudgets(c.Ctx(), cfg) // projects.go
	}
	if err != nil {
		c.Reply("⚠️ Could not read the budgets: "+render.EscapeHTML(err.Error()), replyTo)
		return
	}
	left, _ := st.remaining()
	var global []render.BudgetLimit
	for _, l := range st.limits {
		if l.Project == "" {
			global = append(global, l)
		}
	}
	c.Reply(render.RenderBudget(render.BudgetReport{Now: st.now, Zone: st.zone, WarnAt: st.warnAt, Limits: global,
		Today: st.today, Month: st.month, Cap: left, Projects: projects, Here: here}), replyTo)
}

// Module is the feature.
type Module struct {
	host  *chat.Host
	store store
	proc  chat.Slot[process]
}

// store is what the module reads and writes of the state database.
type store interface {
	CostSince(ctx context.Context, since time.Time) (float64, error)
	ProjectCostSince(ctx context.Context, project string, since time.Time) (float64, error)
	SwapSetting(ctx context.Context, key, value string) (bool, error)
	TurnsSince(ctx context.Context, since time.Time) ([]state.TurnRecord, error)
	LimitWindows(ctx context.Context) ([]state.LimitWindow, error)
	PutLimitWindows(ctx context.Context, ws []state.LimitWindow) error
}

// process is what a chat's live CLI may spend. Only the actor touches it,
// except spawnCap.
type process struct {
	// spawnCap is what the latest spawn of the chat's CLI was allowed to
	// spend (math.Float64bits; 0: no cap). The runner asks for it on its
	// own goroutine (budgetCap); the actor reads it at ProcessStarted.
	spawnCap atomic.Uint64
	// procCap and procSpent are the running process's cap and what its
	// turns cost since it started: what it may still spend.
	procCap, procSpent float64
	procCapped         bool
}

// New builds the module.
func New(h *chat.Host) *Module { return &Module{host: h, store: h.Store()} }

// Register adds /usage and /budget, the refusal of messages over a
// budget, each CLI's spending cap, and the answers' budget and limit lines.
func (m *Module) Register(r *chat.Registry) {
	m.proc = chat.NewSlot[process](r)
	r.Command(chat.Command{Name: "usage", Help: "What Claude cost, and the subscription limits",
		Run: func(c *chat.Chat, in chat.Invocation) { m.showUsage(c, in.Msg.ID) }})
	r.Command(chat.Command{Name: "budget", Help: "Spending against the budgets",
		Run: func(c *chat.Chat, in chat.Invocation) { m.showBudget(c, in.Msg.ID) }})
	r.OnEvent(func(c *chat.Chat, ev runner.Event) {
		p := m.proc.Get(c)
		switch e := ev.(type) {
		case runner.ProcessStarted:
			p.started()
			c.NoteSpendingCap(p.procCapped, p.procCap) // a crash is charged within the cap
		case runner.RateLimit:
			m.onRateLimit(c, e) // usage.go
		case runner.TurnCompleted:
			p.procSpent += e.CostUSD
		}
	})
	r.AnswerNotes(func(c *chat.Chat, tc runner.TurnCompleted) []string { return m.budgetNotes(c, tc) })
	r.AnswerNotes(func(c *chat.Chat, _ runner.TurnCompleted) []string {
		if w := m.windowWarning(c); w != "" { // usage.go
			return []string{w}
		}
		return nil
	})
	r.OnSend(func(c *chat.Chat, o *chat.Outgoing) bool { return m.withinBudget(c, o) })
	r.OnSpawn(func(c *chat.Chat, rc *runner.Config, pl chat.Place) {
		// The runner asks for the cap on its own goroutine: the context
		// and the chat's state are taken here, on the actor.
		ctx, p := c.Ctx(), m.proc.Get(c)
		rc.MaxBudgetUSD = func() float64 { return m.budgetCap(ctx, p, pl.Project) }
	})
}
