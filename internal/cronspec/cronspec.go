package cronspec

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// ErrInvalid is wrapped by every error Parse returns.
var ErrInvalid = errors.New("invalid cron expression")

// MinInterval is the shortest "@every" accepted: a scheduled prompt starts
// a whole Claude turn.
const MinInterval = time.Minute

// Spec is a parsed cron expression.
type Spec struct {
	text  string
	sched cron.Schedule
}

var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Parse reads a five-field expression or a descriptor.
func Parse(text string) (Spec, error) {
	text = strings.Join(strings.Fields(text), " ")
	switch {
	case text == "":
		return Spec{}, fmt.Errorf("%w: empty", ErrInvalid)
	case strings.HasPrefix(text, "TZ=") || strings.HasPrefix(text, "CRON_TZ="):
		return Spec{}, fmt.Errorf("%w: %q: set the time zone apart, not inside the expression", ErrInvalid, text)
	}
	sched, err := parser.Parse(text)
	if err != nil {
		return Spec{}, fmt.Errorf("%w: %q: %v", ErrInvalid, text, err)
	}
	if every, ok := sched.(cron.ConstantDelaySchedule); ok && every.Delay < MinInterval {
		return Spec{}, fmt.Errorf("%w: %q: runs more often than once a minute", ErrInvalid, text)
	}
	return Spec{text: text, sched: sched}, nil
}

// String is the expression, with its whitespace normalised.
func (s Spec) String() string { return s.text }

// Next is the first run strictly after t, read in loc (a "0 9 * * *" runs at
// 09:00 in loc). Zero when there is none (an impossible date).
func (s Spec) Next(t time.Time, loc *time.Location) time.Time {
	if s.sched == nil {
		return time.Time{}
	}
	return s.sched.Next(t.In(loc))
}
