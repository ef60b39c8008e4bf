package render

import "time"

// FormatWhen is a time as the user reads it, in t's location (the caller
// converts to the user's zone): "14:00 CET" on now's day, "tomorrow 09:00
// CET", "Mon 1 Dec 09:00 CET" within a week, else "1 Dec 2026 09:00 CET".
func FormatWhen(t, now time.Time) string {
	now = now.In(t.Location())
	day := func(x time.Time) time.Time { y, m, d := x.Date(); return time.Date(y, m, d, 0, 0, 0, 0, x.Location()) }
	days := int(day(t).Sub(day(now)).Round(24*time.Hour) / (24 * time.Hour))
	clock := t.Format("15:04 MST")
	switch {
	case days == 0:
		return clock
	case days == 1:
		return "tomorrow " + clock
	case days == -1:
		return "yesterday " + clock
	case days > 1 && days < 7:
		return t.Format("Mon 2 Jan ") + clock
	}
	return t.Format("2 Jan 2006 ") + clock
}

// FormatUntil is "14:00 CET (in 3h12m)", or without the countdown once t
// has passed.
func FormatUntil(t, now time.Time) string {
	s := FormatWhen(t, now)
	if d := t.Sub(now); d > 0 {
		s += " (in " + formatCountdown(d) + ")"
	}
	return s
}

// ZoneName names the users' time zone ([telegram] timezone) in headers.
func ZoneName(tz string) string {
	if tz == "" {
		return "the host's time zone"
	}
	return tz
}
