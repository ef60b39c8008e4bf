package render

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// FormatElapsed formats a duration the way the progress header shows it:
// "12s", "1m05s", "2h03m", "2d01h".
func FormatElapsed(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return strconv.FormatInt(s, 10) + "s"
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case s < 48*3600:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd%02dh", s/86400, s%86400/3600)
}

// formatDelay is a retry delay: one decimal under ten seconds, where the
// difference between 0.6s and 1s is the point.
func formatDelay(d time.Duration) string {
	if d < 10*time.Second {
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
	return FormatElapsed(d)
}

// FormatCost is "$0.0123" under a dollar and "$1.23" above.
func FormatCost(usd float64) string { return formatCost(usd) }

// formatCost is "$0.0123" under a dollar and "$1.23" above.
func formatCost(usd float64) string {
	if usd < 1 {
		return fmt.Sprintf("$%.4f", usd)
	}
	return fmt.Sprintf("$%.2f", usd)
}

// formatContext is "12%", with one decimal under 1%; "" when unknown.
func formatContext(pct float64) string {
	switch {
	case pct <= 0 || math.IsNaN(pct):
		return ""
	case pct < 1:
		return strconv.FormatFloat(pct, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(math.Round(pct), 'f', 0, 64) + "%"
}

// formatTokens is "950", "12.3k" or "1.2M".
func formatTokens(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + "k"
	}
	return strconv.FormatFloat(float64(n)/1_000_000, 'f', 1, 64) + "M"
}

// formatClock shows a time in UTC, with the date unless it is on now's day.
// The daemon does not know the user's time zone, so it says which it uses.
func formatClock(t, now time.Time) string {
	t = t.UTC()
	ty, tm, td := t.Date()
	ny, nm, nd := now.UTC().Date()
	if now.IsZero() || ty != ny || tm != nm || td != nd {
		return t.Format("Jan 2 15:04 UTC")
	}
	return t.Format("15:04 UTC")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

func upperFirst(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	if size == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[size:]
}

// FormatSize is a file size as people read it: "1.5 MB", "12.0 KB",
// "300 bytes".
func FormatSize(n int64) string {
	switch {
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// PluralWord is one or many by n, without the number.
func PluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
