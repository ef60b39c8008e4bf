package render

import "time"

// LimitRetryState is where a prompt a subscription limit rejected stands.
type LimitRetryState string

// The states a limit-retry notice shows.
const (
	LimitRetryAsked     LimitRetryState = "asked"     // ⏰ Retry / ✖️ Drop offered
	LimitRetryScheduled LimitRetryState = "scheduled" // sent again at the reset
	LimitRetrySent      LimitRetryState = "sent"
	LimitRetryDropped   LimitRetryState = "dropped"
	LimitRetryOff       LimitRetryState = "off" // retry_after_limit = "off": only when it resets
)

// LimitRetry is the notice that answers a prompt a subscription limit
// rejected.
type LimitRetry struct {
	Window   string    // five_hour, seven_day, … ("" when unknown)
	ResetsAt time.Time // in the user's zone
	Label    string    // the prompt's first words
	State    LimitRetryState
	// By is who chose Retry or Drop; empty when untether did (auto).
	By string
	// At is when the prompt was sent again (LimitRetrySent).
	At time.Time
	// RetryData and DropData are the buttons' callback data.
	RetryData, DropData string
}

// RenderLimitRetry renders the notice: "⛔ 5-hour limit reached; resets at
// 14:00 CET (in 2h13m)", what happens to the prompt, and the buttons that
// fit its state (⏰ Retry at 14:00 and ✖️ Drop while asked, ✖️ Drop while
// scheduled, none after).
func RenderLimitRetry(r LimitRetry, now time.Time) (string, Keyboard) {
	var w htmlText
	w.text("⛔ ")
	w.raw("<b>")
	w.text(upperFirst(windowName(r.Window)) + " limit reached; resets at " + FormatWhen(r.ResetsAt, now))
	w.raw("</b>")
	if d := r.ResetsAt.Sub(now); d > 0 && r.State != LimitRetrySent && r.State != LimitRetryDropped {
		w.text(" (in " + formatCountdown(d) + ")")
	}
	label := "“" + Truncate(oneLine(r.Label), 60) + "”"
	var kb Keyboard
	drop := Button{Text: "✖️ Drop", CallbackData: r.DropData}
	switch r.State {
	case LimitRetryAsked:
		w.text("\nClaude did not answer " + label + ". ⏰ Retry sends it again by itself when the limit resets.")
		kb.Rows = [][]Button{{{Text: "⏰ Retry at " + r.ResetsAt.Format("15:04"), CallbackData: r.RetryData}, drop}}
	case LimitRetryScheduled:
		w.text("\n" + upperFirst(label) + " will be sent again at " + FormatWhen(r.ResetsAt, now) + " by itself")
		if r.By != "" {
			w.text(" (⏰ chosen by " + r.By + ")")
		}
		w.text(". ✖️ Drop cancels that.")
		kb.Rows = [][]Button{{drop}}
	case LimitRetrySent:
		w.text("\n⏰ " + label + " was sent again at " + FormatWhen(r.At, now) + ".")
	case LimitRetryDropped:
		w.text("\n✖️ Dropped")
		if r.By != "" {
			w.text(" by " + r.By)
		}
		w.text(": " + label + " will not be sent again. Send it yourself when you like.")
	case LimitRetryOff:
		w.text("\nClaude did not answer " + label + ". Send it again once the limit has reset.")
	}
	return string(w.b), kb
}
