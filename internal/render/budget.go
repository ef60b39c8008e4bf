package render

import (
	"math"
	"strconv"
	"time"
)

// BudgetLimit is one budget the operator set and where it stands.
type BudgetLimit struct {
	Period   string // "daily" or "monthly"
	LimitUSD float64
	SpentUSD float64
	ResetsAt time.Time // the start of the next day or month, in the user's zone
}

// Over reports whether the budget is used up.
func (l BudgetLimit) Over() bool { return l.SpentUSD >= l.LimitUSD }

// Share is the part of the budget spent (1 = all of it).
func (l BudgetLimit) Share() float64 { return l.SpentUSD / l.LimitUSD }

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
	if len(r.Limits) == 0 {
		w.text("\nNo budget is set. Spent today: " + formatCost(r.Today) + "; this month: " + formatCost(r.Month) + ".")
		w.text("\nThe operator can cap spending with daily_usd and monthly_usd under [budget] in the config.")
		return string(w.b)
	}
	for _, l := range r.Limits {
		w.text("\n" + upperFirst(l.Period) + ": " + formatCost(l.SpentUSD) + " of " + formatCost(l.LimitUSD) +
			" (" + percent(l.Share()) + ")")
		switch {
		case l.Over():
			w.text(" ⛔ used up")
		case l.Share() >= r.WarnAt:
			w.text(" ⚠️")
		}
		w.text(" · resets " + FormatUntil(l.ResetsAt, r.Now))
	}
	if over := overLimit(r.Limits); over != nil {
		w.text("\n\nNew messages are refused until " + FormatWhen(over.ResetsAt, r.Now) + ".")
	} else {
		w.text("\n\nA turn may spend up to " + formatCost(r.Cap) + " more; answers warn at " + percent(r.WarnAt) + " of a budget.")
	}
	return string(w.b)
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
	w.text("The " + l.Period + " budget is used up")
	w.raw("</b>")
	w.text("\n" + formatCost(l.SpentUSD) + " of " + formatCost(l.LimitUSD) + " spent, so this message was not sent to Claude. " +
		"The budget resets " + FormatUntil(l.ResetsAt, now) + "; send it again then. /budget shows where things stand.")
	return string(w.b)
}

// BudgetWarning is the line an answer carries when it took a budget past
// warnAt: "💰 82 % of the daily budget used ($4.10 of $5.00), resets …".
func BudgetWarning(l BudgetLimit, now time.Time) string {
	return "💰 " + percent(l.Share()) + " of the " + l.Period + " budget used (" + formatCost(l.SpentUSD) + " of " +
		formatCost(l.LimitUSD) + "), resets " + FormatUntil(l.ResetsAt, now)
}

// BudgetStopped explains a turn the CLI stopped at its --max-budget-usd
// cap: what the cap was and when the budget that set it resets.
func BudgetStopped(capUSD float64, l BudgetLimit, now time.Time) string {
	s := "💰 Claude stopped at the spending cap untether gave it"
	if capUSD > 0 {
		s += " (" + formatCost(capUSD) + ", what was left of the " + l.Period + " budget)"
	}
	return s + ". New messages are refused until the budget resets " + FormatUntil(l.ResetsAt, now) + "."
}

// percent is "82 %".
func percent(share float64) string {
	return strconv.Itoa(int(math.Round(share*100))) + " %"
}
