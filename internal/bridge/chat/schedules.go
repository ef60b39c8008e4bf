package chat

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/cronspec"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// Scheduled prompts: /at runs a prompt once, /every on a cron schedule,
// [[schedules]] in the config file too; /schedules lists this chat's with
// 🗑 Delete buttons and pauses or resumes them all. A run is a message
// from nobody: it goes through send like one the user typed, so budgets,
// the permission mode and approvals apply, and its progress and answer say
// "⏰ scheduled".

// maxAtDelay bounds /at: further than a year ahead is a typo.
const maxAtDelay = 366 * 24 * time.Hour

// waitingPoll is how often a run that came while the chat was busy checks
// again (a turn's end also starts it).
const waitingPoll = 2 * time.Second

var clockPattern = regexp.MustCompile(`^([01]?[0-9]|2[0-3]):([0-5][0-9])$`)

// scheduleAt answers /at.
func (c *Chat) scheduleAt(args string, m *models.Message) {
	loc := c.b.Config().Telegram.Location()
	now := c.b.now().In(loc)
	at, prompt, err := parseAt(args, now)
	if err != nil {
		c.reply("⚠️ "+render.EscapeHTML(err.Error())+"\nUsage: /at 30m PROMPT, /at 09:00 PROMPT or /at tomorrow 09:00 PROMPT "+
			"(times in "+render.EscapeHTML(render.ZoneName(c.b.Config().Telegram.Timezone))+").", m.ID)
		return
	}
	c.addSchedule(state.Schedule{Key: c.key, Timezone: c.b.Config().Telegram.Timezone, Prompt: prompt, NextRun: at}, m)
}

// scheduleEvery answers /every.
func (c *Chat) scheduleEvery(args string, m *models.Message) {
	spec, prompt, err := parseEvery(args)
	if err != nil {
		c.reply("⚠️ "+render.EscapeHTML(err.Error())+"\nUsage: /every \"0 9 * * 1-5\" PROMPT (minute hour day month weekday, "+
			"or @daily, @hourly, @every 2h).", m.ID)
		return
	}
	tz := c.b.Config().Telegram.Timezone
	sc := state.Schedule{Key: c.key, Cron: spec.String(), Timezone: tz, Prompt: prompt}
	sc.NextRun = spec.Next(c.b.now(), config.LoadLocation(tz))
	if sc.NextRun.IsZero() {
		c.reply("⚠️ This schedule never runs (no date matches it).", m.ID)
		return
	}
	c.addSchedule(sc, m)
}

func (c *Chat) addSchedule(sc state.Schedule, m *models.Message) {
	cfg := c.b.Config()
	sc.CreatedAt = c.b.now()
	if m.From != nil {
		sc.CreatedBy = state.UserID(m.From.ID)
	}
	id, err := c.b.store.AddSchedule(c.ctx(), sc, cfg.Scheduler.MaxPerChat)
	switch {
	case errors.Is(err, state.ErrTooMany):
		c.reply(fmt.Sprintf("⚠️ This chat has %d schedules already, the most it may have. Delete one with /schedules first.",
			cfg.Scheduler.MaxPerChat), m.ID)
		return
	case err != nil:
		c.log.Error().Err(err).Msg("add a schedule")
		c.reply("⚠️ Could not save the schedule: "+render.EscapeHTML(err.Error()), m.ID)
		return
	}
	c.b.pokeScheduler()
	loc := cfg.Telegram.Location()
	text := fmt.Sprintf("⏰ Scheduled #%d, %s. Next run: %s.\n<i>%s</i>\n/schedules lists and deletes them.", id,
		render.EscapeHTML(render.ScheduleWhen(sc.Cron, "")), render.EscapeHTML(render.FormatUntil(sc.NextRun.In(loc), c.b.now().In(loc))),
		render.EscapeHTML(render.Truncate(sc.Prompt, 200)))
	if paused, _ := c.b.schedulesPaused(c.ctx()); paused {
		text += "\n⏸ Schedules are paused: it runs once someone sends /schedules resume."
	}
	c.reply(text, m.ID)
}

// schedulesCommand answers /schedules, /schedules pause and /schedules resume.
func (c *Chat) schedulesCommand(args string, replyTo int) {
	switch strings.ToLower(strings.TrimSpace(args)) {
	case "":
		html, kb := c.schedulesList()
		c.b.out.Send(c.ctx(), c.outKey, outbox.High, outbox.Content{Text: html, Keyboard: kb},
			outbox.SendOptions{ReplyTo: outbox.MessageID(replyTo)})
	case "pause":
		c.setPaused(true, replyTo,
			"⏸ Scheduled prompts are paused, in every chat. /schedules resume starts them again; each one due meanwhile then runs once.")
	case "resume":
		c.setPaused(false, replyTo, "▶️ Scheduled prompts run again.")
	default:
		c.reply("Usage: /schedules lists this chat's schedules; /schedules pause and /schedules resume stop and start them all.", replyTo)
	}
}

func (c *Chat) setPaused(paused bool, replyTo int, text string) {
	v := "0"
	if paused {
		v = "1"
	}
	if err := c.b.store.SetSetting(c.ctx(), settingPaused, v); err != nil {
		c.reply("⚠️ Could not change it: "+render.EscapeHTML(err.Error()), replyTo)
		return
	}
	c.b.pokeScheduler()
	c.reply(text, replyTo)
}

// schedulesList renders the chat's schedules with their Delete buttons.
func (c *Chat) schedulesList() (string, render.Keyboard) {
	cfg := c.b.Config()
	loc := cfg.Telegram.Location()
	r := render.SchedulesReport{Now: c.b.now().In(loc), Zone: render.ZoneName(cfg.Telegram.Timezone), Max: cfg.Scheduler.MaxPerChat,
		CatchUp: cfg.Scheduler.CatchUp}
	var err error
	if r.Paused, err = c.b.schedulesPaused(c.ctx()); err != nil {
		c.log.Error().Err(err).Msg("read whether schedules are paused")
	}
	list, err := c.b.store.ChatSchedules(c.ctx(), c.key)
	if err != nil {
		return "⚠️ Could not read the schedules: " + render.EscapeHTML(err.Error()), render.Keyboard{}
	}
	for _, sc := range list {
		it := render.ScheduledPrompt{ID: sc.ID, Cron: sc.Cron, Prompt: sc.Prompt, NextRun: sc.NextRun.In(loc),
			FromConfig: sc.Source == state.ScheduleFromConfig, FreshSession: sc.FreshSession, Project: c.b.scheduleProject(sc)}
		if sc.Cron != "" && sc.Timezone != cfg.Telegram.Timezone {
			it.Zone = render.ZoneName(sc.Timezone)
		}
		if !it.FromConfig {
			it.DeleteData = callbackData(btnDeleteSchedule, strconv.FormatInt(sc.ID, 10))
			r.Made++
		}
		r.Items = append(r.Items, it)
	}
	return render.RenderSchedules(r)
}

// deleteSchedule applies a 🗑 Delete press on the list in message msgID.
func (c *Chat) deleteSchedule(id int64, msgID int, from models.User) {
	ok, err := c.b.store.DeleteSchedule(c.ctx(), c.key, id)
	if err != nil {
		c.log.Error().Err(err).Msg("delete a schedule")
		c.reply("⚠️ Could not delete it: "+render.EscapeHTML(err.Error()), msgID)
		return
	}
	html, kb := c.schedulesList()
	c.b.out.Edit(c.ctx(), c.b.out.Adopt(c.outKey, outbox.MessageID(msgID)), outbox.High, outbox.Content{Text: html, Keyboard: kb})
	if ok {
		c.b.pokeScheduler()
		c.reply(fmt.Sprintf("🗑 Deleted #%d (%s).", id, render.EscapeHTML(userName(from))), msgID)
	}
}

// runScheduled sends a schedule's prompt, once the chat is free: a run
// never folds into a turn the user started. An album or forwards being
// collected go first, in the project they were sent in: the flush makes
// the chat busy with them, so the run waits for their turn.
func (c *Chat) runScheduled(sc state.Schedule) {
	c.flushPending() // an album or forwards being collected go first (batch.go)
	if c.busy() {
		c.away.waiting = append(c.away.waiting, sc)
		c.pollWaiting()
		return
	}
	if !c.enterScheduledProject(sc) { // schedules_projects.go: skipped, and told
		c.finishScheduleRun(sc)
		return
	}
	if sc.FreshSession {
		c.resetSession()
	}
	before := c.turn
	c.log.Info().Int64("schedule", sc.ID).Msg("running a scheduled prompt")
	in := runner.UserInput{Text: sc.Prompt}
	c.sendOutgoing(&Outgoing{input: in, label: labelOf(in), from: sc.CreatedBy, settled: func() { c.finishScheduleRun(sc) }}) // pending_runs.go
	if t := c.turn; t != nil && t != before && !t.done {
		t.notes = append(t.notes, scheduledNote(sc))
	}
}

// runWaiting runs the oldest run that came while the chat was busy.
func (c *Chat) runWaiting() {
	if len(c.away.waiting) == 0 {
		return
	}
	if c.busy() {
		c.pollWaiting()
		return
	}
	sc := c.away.waiting[0]
	c.away.waiting = c.away.waiting[1:]
	c.runScheduled(sc)
}

func (c *Chat) pollWaiting() {
	if c.away.polling {
		return
	}
	c.away.polling = true
	time.AfterFunc(waitingPoll, func() {
		c.post(item{fn: func() {
			c.away.polling = false
			c.runWaiting()
		}})
	})
}

// scheduledNote marks a scheduled turn: "⏰ scheduled #3 (once): check the
// deploy".
func scheduledNote(sc state.Schedule) string {
	return "⏰ scheduled #" + strconv.FormatInt(sc.ID, 10) + " (" + render.ScheduleWhen(sc.Cron, "") + "): " +
		render.Truncate(strings.Join(strings.Fields(sc.Prompt), " "), 80)
}

// parseAt reads "/at 30m PROMPT", "/at 09:00 PROMPT", "/at tomorrow 09:00
// PROMPT" (and "/at 2026-12-24 09:00 PROMPT") at now, in now's zone. A
// bare time already past today means tomorrow.
func parseAt(args string, now time.Time) (time.Time, string, error) {
	first, rest := cutWord(args)
	var at time.Time
	switch {
	case first == "":
		return time.Time{}, "", errors.New("say when, and what to send")
	case strings.EqualFold(first, "tomorrow"):
		clock, r := cutWord(rest)
		h, m, ok := parseClock(clock)
		if !ok {
			return time.Time{}, "", fmt.Errorf("%q is not a time such as 09:00", clock)
		}
		rest = r
		at = time.Date(now.Year(), now.Month(), now.Day()+1, h, m, 0, 0, now.Location())
	case clockPattern.MatchString(first):
		h, m, _ := parseClock(first)
		at = time.Date(now.Year(), now.Month(), now.Day(), h, m, 0, 0, now.Location())
		if !at.After(now) {
			at = at.AddDate(0, 0, 1)
		}
	default:
		if day, err := time.ParseInLocation(time.DateOnly, first, now.Location()); err == nil {
			clock, r := cutWord(rest)
			h, m, ok := parseClock(clock)
			if !ok {
				return time.Time{}, "", fmt.Errorf("%q is not a time such as 09:00", clock)
			}
			rest = r
			at = time.Date(day.Year(), day.Month(), day.Day(), h, m, 0, 0, now.Location())
			break
		}
		d, err := parseDelay(first)
		if err != nil {
			return time.Time{}, "", err
		}
		at = now.Add(d)
	}
	prompt := strings.TrimSpace(rest)
	switch {
	case !at.After(now):
		return time.Time{}, "", errors.New("that time has passed")
	case at.Sub(now) > maxAtDelay:
		return time.Time{}, "", errors.New("that is more than a year ahead")
	case prompt == "":
		return time.Time{}, "", errors.New("say what to send to Claude after the time")
	}
	return at, prompt, nil
}

// parseDelay reads "30m", "2h", "1h30m", "90s" or "2d".
func parseDelay(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n > 0 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a delay such as 30m or 2h, nor a time such as 09:00", s)
	}
	return d, nil
}

func parseClock(s string) (h, m int, ok bool) {
	g := clockPattern.FindStringSubmatch(s)
	if g == nil {
		return 0, 0, false
	}
	h, _ = strconv.Atoi(g[1])
	m, _ = strconv.Atoi(g[2])
	return h, m, true
}

// cutWord splits off the first whitespace-separated word; rest keeps its
// own spacing (a prompt's line breaks matter).
func cutWord(s string) (word, rest string) {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

// openQuotes and their closing partners: phones turn " into “ ”.
var quotes = map[rune]string{'"': `"“”`, '“': `”"`, '”': `”"`, '\'': `'’`, '‘': `’'`, '«': `»`}

// parseEvery reads `/every "0 9 * * 1-5" PROMPT`, `/every @daily PROMPT`,
// `/every @every 2h PROMPT` and the unquoted `/every 0 9 * * 1-5 PROMPT`.
func parseEvery(args string) (cronspec.Spec, string, error) {
	args = strings.TrimSpace(args)
	var expr, rest string
	open, size := utf8.DecodeRuneInString(args)
	switch closers, quoted := quotes[open]; {
	case args == "":
		return cronspec.Spec{}, "", errors.New("say when (a cron expression) and what to send")
	case quoted:
		end := strings.IndexAny(args[size:], closers)
		if end < 0 {
			return cronspec.Spec{}, "", errors.New("the cron expression's closing quote is missing")
		}
		expr, rest = args[size:size+end], args[size+end:]
		_, n := utf8.DecodeRuneInString(rest)
		rest = rest[n:]
	case strings.HasPrefix(args, "@every"):
		w1, r := cutWord(args)
		w2, r := cutWord(r)
		expr, rest = w1+" "+w2, r
	case strings.HasPrefix(args, "@"):
		expr, rest = cutWord(args)
	default:
		rest = args
		var fields []string
		for range 5 {
			var w string
			w, rest = cutWord(rest)
			fields = append(fields, w)
		}
		expr = strings.Join(fields, " ")
	}
	spec, err := cronspec.Parse(expr)
	if err != nil {
		return cronspec.Spec{}, "", err
	}
	prompt := strings.TrimSpace(rest)
	if prompt == "" {
		return cronspec.Spec{}, "", errors.New("say what to send to Claude after the schedule")
	}
	return spec, prompt, nil
}

// Register adds /at, /every and /schedules.
func (m schedulesModule) Register(r *Registry) {
	r.Command(Command{Name: "at", Help: "Send a prompt later: /at 30m PROMPT, /at 09:00 PROMPT",
		Run: func(c *Chat, in Invocation) { c.scheduleAt(in.Args, in.Msg) }})
	r.Command(Command{Name: "every", Help: "Send a prompt on a schedule: /every \"0 9 * * 1-5\" PROMPT",
		Run: func(c *Chat, in Invocation) { c.scheduleEvery(in.Args, in.Msg) }})
	r.Command(Command{Name: "schedules", Help: "This chat's schedules; /schedules pause or resume",
		Run: func(c *Chat, in Invocation) { c.schedulesCommand(in.Args, in.Msg.ID) }})
	r.OnEvent(func(c *Chat, ev runner.Event) {
		switch e := ev.(type) {
		case runner.RateLimit:
			if e.Status == "rejected" && !e.ResetsAt.IsZero() { // remembered for the retry offer (limitretry.go)
				c.away.rejection = &e
			}
		case runner.TurnCompleted:
			c.away.rejection = nil
			if len(c.away.waiting) > 0 {
				c.post(item{fn: c.runWaiting})
			}
		}
	})
	r.InterceptAnswer(func(c *Chat, tc runner.TurnCompleted, replyTo int) bool { return c.answerLimit(tc, replyTo) })
	const wait = "untether is restarting; press again once it is back."
	r.StoredButton(btnRetryLimit, StoredButton{Ack: "Will retry", Wait: wait, WaitFirst: true, Resolve: m.b.resolveAway(btnRetryLimit)})
	r.StoredButton(btnDropRetry, StoredButton{Ack: "Dropped", Wait: wait, WaitFirst: true, Resolve: m.b.resolveAway(btnDropRetry)})
	r.StoredButton(btnDeleteSchedule, StoredButton{Ack: "Deleting…", Wait: wait, WaitFirst: true, Resolve: m.b.resolveAway(btnDeleteSchedule)})
}
