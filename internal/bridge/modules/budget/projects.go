package budget

import (
	"context"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
)

// Per-project budgets ([projects.<name>.budget]): the same daily and
// monthly caps as [budget], over the turns recorded in the project (the
// turns table files each turn under the project its session ran in). They
// add to the global budgets, never replace them; budget.go applies both.

// addProjectBudget appends project's own budgets to st, if it has any.
func (m *Module) addProjectBudget(ctx context.Context, cfg *config.Config, st *budgetState, project string) error {
	p, ok := cfg.Project(project)
	if !ok || !p.Budget.Enabled() {
		return nil
	}
	limits, err := m.projectLimits(ctx, cfg, p)
	if err != nil {
		return err
	}
	st.project, st.projWarnAt = p.Name, projectWarnAt(cfg, p)
	st.limits = append(st.limits, limits...)
	return nil
}

// projectLimits are where project p's own budgets stand.
func (m *Module) projectLimits(ctx context.Context, cfg *config.Config, p config.ProjectSettings) ([]render.BudgetLimit, error) {
	_, day, month := m.budgetPeriods(cfg)
	var out []render.BudgetLimit
	if usd := p.Budget.DailyUSD; usd > 0 {
		spent, err := m.store.ProjectCostSince(ctx, p.Name, day)
		if err != nil {
			return nil, err
		}
		out = append(out, render.BudgetLimit{Period: "daily", Project: p.Name, LimitUSD: usd, SpentUSD: spent, ResetsAt: day.AddDate(0, 0, 1)})
	}
	if usd := p.Budget.MonthlyUSD; usd > 0 {
		spent, err := m.store.ProjectCostSince(ctx, p.Name, month)
		if err != nil {
			return nil, err
		}
		out = append(out, render.BudgetLimit{Period: "monthly", Project: p.Name, LimitUSD: usd, SpentUSD: spent, ResetsAt: month.AddDate(0, 1, 0)})
	}
	return out, nil
}

// projectWarnAt is p's warn_at, budget.warn_at when it sets none.
func projectWarnAt(cfg *config.Config, p config.ProjectSettings) float64 {
	if p.Budget.WarnAt > 0 {
		return p.Budget.WarnAt
	}
	return cfg.Budget.WarnAt
}

// projectBudgets are the projects with a budget of their own, for /budget.
func (m *Module) projectBudgets(ctx context.Context, cfg *config.Config) ([]render.ProjectBudget, error) {
	var out []render.ProjectBudget
	for _, name := range cfg.ProjectBudgets() {
		p, _ := cfg.Project(name)
		limits, err := m.projectLimits(ctx, cfg, p)
		if err != nil {
			return nil, err
		}
		out = append(out, render.ProjectBudget{Name: p.Name, WarnAt: projectWarnAt(cfg, p), Limits: limits})
	}
	return out, nil
}

// warnedSetting names the state setting that remembers l's last warning.
// The global budgets keep their original names.
func warnedSetting(l render.BudgetLimit) string {
	if l.Project == "" {
		return "budget-warned-" + l.Period
	}
	return "budget-warned-" + l.Period + "-project-" + l.Project
}
