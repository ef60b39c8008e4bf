package render

import (
	"math"
	"slices"
	"strconv"
	"time"
)

// BudgetLimit is one budget the operator set and where it stands.
type BudgetLimit struct {
	Period string // "daily" or "monthly"
	// Project is the project whose own budget this is; "" for the global
	// budget over every project.
	Project  string
	LimitUSD float64
	SpentUSD float64
	ResetsAt time.Time // the start of the next day or month, in the user's zone
}

// Over reports whether the budget is used up.
func (l BudgetLimit) Over() bool { return l.SpentUSD >= l.LimitUSD }

// Share is the part of the budget spent (1 = all of it).
func (l BudgetLimit) Share() float64 { return l.SpentUSD / l.LimitUSD }

// name is "daily budget", or "daily budget of project api".
func (l BudgetLimit) name() string {
	if l.Project == "" {
		return l.Period + " budget"
	}
	return l.Period + " budget of project " + l.Project
}

// ProjectBudget is a project's own budget in /budget.
type ProjectBudget struct {
	Name   string
	WarnAt float64
	Limits []BudgetLimit
}

// BudgetReport is what /budget shows.
type BudgetReport struct {
	Now    time.Time
	Zone   string
	WarnAt float64
	// Limits are the budgets set; none means no budget is configured.
	Limits []BudgetLimit
	// Today and Month are what was spent, shown even without budgets.
	Today, Month float64
	// Cap is what a CLI started now may spend (--max-budget-usd).
	Cap float64
	// Projects are the projects with a budget of their own; Here is the
	// chat's project, whose budget (with the global one) decides what
	// its messages may do.
	Projects []ProjectBudget
	Here     string
}

// RenderBudget renders /budget.
func RenderBudget(r BudgetReport) string {
	var w htmlText
	w.text("💰 ")
	w.raw("<b>")
	w.text("Budget")
	w.raw("</b>")
	if r.Zone != "" {
		w.text(" (days in " + r.Zone + ")")
	}
	if len(r.Limits) == 0 && len(r.Projects) == 0 {
		w.text("\nNo budget is set. Spent today: " + formatCost(r.Today) + "; this month: " + formatCost(r.Month) + ".")
		w.text("\nThe operator can cap spending with daily_usd and monthly_usd under [budget] in the config.")
		return string(w.b)
	}
	if len(r.Limits) == 0 {
		w.text("\nNo budget over all projects. Spent today: " + formatCost(r.Today) + "; this month: " + formatCost(r.Month) + ".")
	}
	budgetLines(&w, r.Limits, r.WarnAt, r.Now)
	here := r.Limits
	for _, p := range r.Projects {
		w.text("\n\n📁 ")
		w.raw("<b>")
		w.text(p.Name)
		w.raw("</b>")
		budgetLines(&w, p.Limits, p.WarnAt, r.Now)
		if p.Name == r.Here {
			here = append(slices.Clone(here), p.Limits...)
		}
	}
	switch over := overLimit(here); {
	case over != nil && over.Project != "":
		w.text("\n\nNew messages in project " + over.Project + " are refused until " + FormatWhen(over.ResetsAt, r.Now) +
			"; other projects still work (/project).")
	case over != nil:
		w.text("\n\nNew messages are refused until " + FormatWhen(over.ResetsAt, r.Now) + ".")
	case len(r.Projects) > 0 && r.Here != "":
		w.text("\n\nA turn in " + r.Here + " may spend up to " + formatCost(r.Cap) + " more; answers warn at " + percent(r.WarnAt) + " of a budget.")
	default:
		w.text("\n\nA turn may spend up to " + formatCost(r.Cap) + " more; answers warn at " + percent(r.WarnAt) + " of a budget.")
	}
	return string(w.b)
}

// budgetLines are one line per budget: spent, share, mark and reset.
func budgetLines(w *htmlText, ls []BudgetLimit, warnAt float64, now time.Time) {
	for _, l := range ls {
		w.text("\n" + upperFirst(l.Period) + ": " + formatCost(l.SpentUSD) + " of " + formatCost(l.LimitUSD) +
			" (" + percent(l.Share()) + ")")
		switch {
		case l.Over():
			w.text(" ⛔ used up")
		case l.Share() >= warnAt:
			w.text(" ⚠️")
		}
		w.text(" · resets " + FormatUntil(l.ResetsAt, now))
	}
}

// overLimit is the used-up budget that resets last (the one that decides
// when messages are accepted again), nil if none is used up.
func overLimit(ls []BudgetLimit) *BudgetLimit {
	var out *BudgetLimit
	for i := range ls {
		if ls[i].Over() && (out == nil || ls[i].ResetsAt.After(out.ResetsAt)) {
			out = &ls[i]
		}
	}
	return out
}

// BudgetRefusal is the answer to a message sent while a budget is used up.
func BudgetRefusal(ls []BudgetLimit, now time.Time) string {
	l := overLimit(ls)
	if l == nil {
		return ""
	}
	var w htmlText
	w.text("💰 ")
	w.raw("<b>")
	w.text("The " + l.name() + " is used up")
	w.raw("</b>")
	w.text("\n" + formatCost(l.SpentUSD) + " of " + formatCost(l.LimitUSD) + " spent, so this message was not sent to Claude. " +
		"The budget resets " + FormatUntil(l.ResetsAt, now) + "; send it again then")
	if l.Project != "" {
		w.text(", or work in another project (/project)")
	}
	w.text(". /budget shows where things stand.")
	return string(w.b)
}

// BudgetWarning is the line an answer carries when it took a budget past
// warnAt: "💰 82 % of the daily budget used ($4.10 of $5.00), resets …".
func BudgetWarning(l BudgetLimit, now time.Time) string {
	return "💰 " + percent(l.Share()) + " of the " + l.name() + " used (" + formatCost(l.SpentUSD) + " of " +
		formatCost(l.LimitUSD) + "), resets " + FormatUntil(l.ResetsAt, now)
}

// BudgetStopped explains a turn the CLI stopped at its --max-budget-usd
// cap: what the cap was and when the budget that set it resets.
func BudgetStopped(capUSD float64, l BudgetLimit, now time.Time) string {
	s := "💰 Claude stopped at the spending cap untether gave it"
	if capUSD > 0 {
		s += " (" + formatCost(capUSD) + ", what was left of the " + l.name() + ")"
	}
	if l.Project != "" {
		return s + ". New messages in project " + l.Project + " are refused until the budget resets " + FormatUntil(l.ResetsAt, now) + "."
	}
	return s + ". New messages are refused until the budget resets " + FormatUntil(l.ResetsAt, now) + "."
}

// percent is "82 %".
func percent(share float64) string {
	return strconv.Itoa(int(math.Round(share*100))) + " %"
}
