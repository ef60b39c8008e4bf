package runner

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Claude schedules its own wake-ups with two CLI tools: ScheduleWakeup
// ({"delaySeconds":300,"reason":"…","prompt":"…"}, or {"stop":true} to end
// a loop) and CronCreate ({"cron":"*/5 * * * *","prompt":"…",
// "recurring":false}). Their results say when the wake-up fires:
// ScheduleWakeup's scheduledFor and CronCreate's nextFireAt, both in epoch
// milliseconds, and CronCreate's humanSchedule.

func isScheduleTool(name string) bool { return name == "ScheduleWakeup" || name == "CronCreate" }

// parseSchedule reads a ScheduleWakeup or CronCreate input; nil for other
// tools. A malformed input still yields what could be read.
func parseSchedule(tool string, input json.RawMessage) *Schedule {
	if !isScheduleTool(tool) {
		return nil
	}
	var in struct {
		DelaySeconds json.RawMessage `json:"delaySeconds"`
		Reason       string          `json:"reason"`
		Prompt       string          `json:"prompt"`
		Stop         bool            `json:"stop"`
		Cron         string          `json:"cron"`
		Recurring    *bool           `json:"recurring"`
	}
	_ = json.Unmarshal(input, &in) // the fields that decoded are still worth showing
	s := &Schedule{Tool: tool, Reason: in.Reason, Prompt: in.Prompt, Stop: in.Stop, Cron: in.Cron}
	if secs, ok := number(in.DelaySeconds); ok && secs > 0 {
		s.Delay = time.Duration(secs * float64(time.Second))
	}
	if tool == "CronCreate" {
		s.Recurring = in.Recurring == nil || *in.Recurring // the CLI's default is recurring
	}
	return s
}

// summary is the one-line ToolSummary of a schedule call.
func (s *Schedule) summary() string {
	what := firstText(s.Reason, s.Prompt)
	var when string
	switch {
	case s.Stop:
		return "stop the loop"
	case s.Tool == "CronCreate" && s.Cron != "":
		when = s.Cron
		if !s.Recurring {
			when += " (once)"
		}
	case s.Delay > 0:
		when = "in " + shortDuration(s.Delay)
	}
	switch {
	case when == "":
		return what
	case what == "":
		return when
	}
	return when + ": " + what
}

// scheduleResult reads when a schedule call's wake-up fires, and the
// CLI's wording of a cron schedule, from its tool_use_result.
func scheduleResult(raw json.RawMessage) (time.Time, string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return time.Time{}, ""
	}
	var r struct {
		ScheduledFor  json.RawMessage `json:"scheduledFor"`
		NextFireAt    json.RawMessage `json:"nextFireAt"`
		HumanSchedule string          `json:"humanSchedule"`
	}
	if json.Unmarshal(raw, &r) != nil {
		return time.Time{}, ""
	}
	ms, ok := number(r.ScheduledFor)
	if !ok {
		ms, ok = number(r.NextFireAt)
	}
	var at time.Time
	if ok && ms > 0 {
		at = time.UnixMilli(int64(ms)).UTC()
	}
	return at, r.HumanSchedule
}

// number reads a JSON number, or a string holding one (the CLI coerces
// delaySeconds, so the model may send either).
func number(raw json.RawMessage) (float64, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0, false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0, false
		}
		raw = []byte(strings.TrimSpace(s))
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	return f, err == nil
}

// shortDuration is "45s", "5m", "5m30s", "1h" or "1h30m".
func shortDuration(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return strconv.FormatInt(s, 10) + "s"
	case s < 3600:
		if s%60 == 0 {
			return strconv.FormatInt(s/60, 10) + "m"
		}
		return strconv.FormatInt(s/60, 10) + "m" + strconv.FormatInt(s%60, 10) + "s"
	}
	h, m := s/3600, s%3600/60
	if m == 0 {
		return strconv.FormatInt(h, 10) + "h"
	}
	return strconv.FormatInt(h, 10) + "h" + strconv.FormatInt(m, 10) + "m"
}

func firstText(ss ...string) string {
	for _, s := range ss {
		if s = strings.Join(strings.Fields(s), " "); s != "" {
			return s
		}
	}
	return ""
}

// cronJobs reads the jobs a CronCreate result made (one) or a CronList
// result lists; nil for other tools or a result it cannot read. CronCreate's
// result has no prompt or expression: the call's input has them.
func cronJobs(tool string, raw json.RawMessage) []CronJob {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	type job struct {
		ID            string          `json:"id"`
		Cron          string          `json:"cron"`
		HumanSchedule string          `json:"humanSchedule"`
		Prompt        string          `json:"prompt"`
		Recurring     *bool           `json:"recurring"`
		Durable       bool            `json:"durable"`
		NextFireAt    json.RawMessage `json:"nextFireAt"`
	}
	read := func(j job) CronJob {
		c := CronJob{ID: j.ID, Cron: j.Cron, Schedule: j.HumanSchedule, Prompt: j.Prompt, Durable: j.Durable,
			Recurring: j.Recurring != nil && *j.Recurring}
		if ms, ok := number(j.NextFireAt); ok && ms > 0 {
			c.NextFire = time.UnixMilli(int64(ms)).UTC()
		}
		return c
	}
	switch tool {
	case "CronCreate":
		var j job
		if json.Unmarshal(raw, &j) != nil || j.ID == "" {
			return nil
		}
		return []CronJob{read(j)}
	case "CronList":
		var l struct {
			Jobs []json.RawMessage `json:"jobs"`
		}
		if json.Unmarshal(raw, &l) != nil {
			return nil
		}
		out := make([]CronJob, 0, len(l.Jobs))
		for _, r := range l.Jobs {
			var j job
			if json.Unmarshal(r, &j) == nil && j.ID != "" { // a job it cannot read is left out, not the list
				out = append(out, read(j))
			}
		}
		return out
	}
	return nil
}
