package schedules

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/cronspec"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// maxAtDelay bounds /at: further than a year ahead is a typo.
const maxAtDelay = 366 * 24 * time.Hour

var clockPattern = regexp.MustCompile(`^([01]?[0-9]|2[0-3]):([0-5][0-9])$`)

// scheduleAt answers /at.
func (m *Module) scheduleAt(c *chat.Chat, args string, msg *models.Message) {
	loc := c.Config().Telegram.Location()
	now := m.host.Now().In(loc)
	at, prompt, err := parseAt(args, now)
	if err != nil {
		c.Reply("⚠️ "+render.EscapeHTML(err.Error())+"\nUsage: /at 30m PROMPT, /at 09:00 PROMPT or /at tomorrow 09:00 PROMPT "+
			"(times in "+render.EscapeHTML(render.ZoneName(c.Config().Telegram.Timezone))+").", msg.ID)
		return
	}
	m.addSchedule(c, state.Schedule{Key: c.Key(), Timezone: c.Config().Telegram.Timezone, Prompt: prompt, NextRun: at}, msg)
}

// scheduleEvery answers /every.
func (m *Module) scheduleEvery(c *chat.Chat, args string, msg *models.Message) {
	spec, prompt, err := parseEvery(args)
	if err != nil {
		c.Reply("⚠️ "+render.EscapeHTML(err.Error())+"\nUsage: /every \"0 9 * * 1-5\" PROMPT (minute hour day month weekday, "+
			"or @daily, @hourly, @every 2h).", msg.ID)
		return
	}
	tz := c.Config().Telegram.Timezone
	sc := state.Schedule{Key: c.Key(), Cron: spec.String(), Timezone: tz, Prompt: prompt}
	sc.NextRun = spec.Next(m.host.Now(), config.LoadLocation(tz))
	if sc.NextRun.IsZero() {
		c.Reply("⚠️ This schedule never runs (no date matches it).", msg.ID)
		return
	}
	m.addSchedule(c, sc, msg)
}

func (m *Module) addSchedule(c *chat.Chat, sc state.Schedule, msg *models.Message) {
	cfg := c.Config()
	sc.CreatedAt = m.host.Now()
	if msg.From != nil {
		sc.CreatedBy = state.UserID(msg.From.ID)
	}
	id, err := m.store.AddSchedule(c.Ctx(), sc, cfg.Scheduler.MaxPerChat)
	switch {
	case errors.Is(err, state.ErrTooMany):
		c.Reply(fmt.Sprintf("⚠️ This chat has %d schedules already, the most it may have. Delete one with /schedules first.",
			cfg.Scheduler.MaxPerChat), msg.ID)
		return
	case err != nil:
		c.Log().Error().Err(err).Msg("add a schedule")
		c.Reply("⚠️ Could not save the schedule: "+render.EscapeHTML(err.Error()), msg.ID)
		return
	}
	m.pokeScheduler()
	loc := cfg.Telegram.Location()
	text := fmt.Sprintf("⏰ Scheduled #%d, %s. Next run: %s.\n<i>%s</i>\n/schedules lists and deletes them.", id,
		render.EscapeHTML(render.ScheduleWhen(sc.Cron, "")), render.EscapeHTML(render.FormatUntil(sc.NextRun.In(loc), m.host.Now().In(loc))),
		render.EscapeHTML(render.Truncate(sc.Prompt, 200)))
	if paused, _ := m.schedulesPaused(c.Ctx()); paused {
		text += "\n⏸ Schedules are paused: it runs once someone sends /schedules resume."
	}
	c.Reply(text, msg.ID)
}

// schedulesCommand answers /schedules, /schedules pause and /schedules resume.
func (m *Module) schedulesCommand(c *chat.Chat, args string, replyTo int) {
	switch strings.ToLower(strings.TrimSpace(args)) {
	case "":
		html, kb := m.schedulesList(c)
		c.SendMessage(outbox.High, outbox.Content{Text: html, Keyboard: kb},
			outbox.SendOptions{ReplyTo: outbox.MessageID(replyTo)})
	case "pause":
		m.setPaused(c, true, replyTo,
			"⏸ Scheduled prompts are paused, in every chat. /schedules resume starts them again; each one due meanwhile then runs once.")
	case "resume":
		m.setPaused(c, false, replyTo, "▶️ Scheduled prompts run again.")
	default:
		c.Reply("Usage: /schedules lists this chat's schedules; /schedules pause and /schedules resume stop and start them all.", replyTo)
	}
}

func (m *Module) setPaused(c *chat.Chat, paused bool, replyTo int, text string) {
	v := "0"
	if paused {
		v = "1"
	}
	if err := m.store.SetSetting(c.Ctx(), settingPaused, v); err != nil {
		c.Reply("⚠️ Could not change it: "+render.EscapeHTML(err.Error()), replyTo)
		return
	}
	m.pokeScheduler()
	c.Reply(text, replyTo)
}

// schedulesList renders the chat's schedules with their Delete buttons.
func (m *Module) schedulesList(c *chat.Chat) (string, render.Keyboard) {
	cfg := c.Config()
	loc := cfg.Telegram.Location()
	r := render.SchedulesReport{Now: m.host.Now().In(loc), Zone: render.ZoneName(cfg.Telegram.Timezone), Max: cfg.Scheduler.MaxPerChat,
		CatchUp: cfg.Scheduler.CatchUp}
	var err error
	if r.Paused, err = m.schedulesPaused(c.Ctx()); err != nil {
		c.Log().Error().Err(err).Msg("read whether schedules are paused")
	}
	list, err := m.store.ChatSchedules(c.Ctx(), c.Key())
	if err != nil {
		return "⚠️ Could not read the schedules: " + render.EscapeHTML(err.Error()), render.Keyboard{}
	}
	for _, sc := range list {
		it := render.ScheduledPrompt{ID: sc.ID, Cron: sc.Cron, Prompt: sc.Prompt, NextRun: sc.NextRun.In(loc),
			FromConfig: sc.Source == state.ScheduleFromConfig, FreshSession: sc.FreshSession, Project: m.scheduleProject(sc)}
		if sc.Cron != "" && sc.Timezone != cfg.Telegram.Timezone {
			it.Zone = render.ZoneName(sc.Timezone)
		}
		if !it.FromConfig {
			it.DeleteData = chat.CallbackData(btnDeleteSchedule, strconv.FormatInt(sc.ID, 10))
			r.Made++
		}
		r.Items = append(r.Items, it)
	}
	return render.RenderSchedules(r)
}

// deleteSchedule applies a 🗑 Delete press on the list in message msgID.
func (m *Module) deleteSchedule(c *chat.Chat, id int64, msgID int, from models.User) {
	ok, err := m.store.DeleteSchedule(c.Ctx(), c.Key(), id)
	if err != nil {
		c.Log().Error().Err(err).Msg("delete a schedule")
		c.Reply("⚠️ Could not delete it: "+render.EscapeHTML(err.Error()), msgID)
		return
	}
	html, kb := m.schedulesList(c)
	c.EditMessage(c.Message(msgID), outbox.High, outbox.Content{Text: html, Keyboard: kb})
	if ok {
		m.pokeScheduler()
		c.Reply(fmt.Sprintf("🗑 Deleted #%d (%s).", id, render.EscapeHTML(chat.UserName(from))), msgID)
	}
}

// startScheduled sends sc's prompt, the chat being free: due runs wait
// for it, oldest first, in the chat's queue (m.queue, chat.WaitQueue), so
// one never folds into a turn the user started nor overtakes a run that
// came due before it. An album or forwards being collected go first, in
// the project they were sent in: the flush makes the chat busy with them.
func (m *Module) startScheduled(c *chat.Chat, sc state.Schedule) {
	if !m.enterScheduledProject(c, sc) { // projects.go: skipped, and told
		m.finishScheduleRun(c, sc)
		return
	}
	if sc.FreshSession {
		c.ResetSession()
	}
	c.Log().Info().Int64("schedule", sc.ID).Msg("running a scheduled prompt")
	in := runner.UserInput{Text: sc.Prompt}
	c.SendOutgoing(chat.NewOutgoing(in, 0, sc.CreatedBy).WithNote(scheduledNote(sc)).
		OnSettled(func() { m.finishScheduleRun(c, sc) })) // pending.go
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

// Register adds /at, /every and /schedules, the retry offered when a
// limit rejects a prompt, and their buttons.
func (m *Module) Register(r *chat.Registry) {
	m.away = chat.NewSlot[chatAway](r)
	m.queue = chat.NewWaitQueue(r, m.startScheduled)
	r.Command(chat.Command{Name: "at", Help: "Send a prompt later: /at 30m PROMPT, /at 09:00 PROMPT",
		Run: func(c *chat.Chat, in chat.Invocation) { m.scheduleAt(c, in.Args, in.Msg) }})
	r.Command(chat.Command{Name: "every", Help: "Send a prompt on a schedule: /every \"0 9 * * 1-5\" PROMPT",
		Run: func(c *chat.Chat, in chat.Invocation) { m.scheduleEvery(c, in.Args, in.Msg) }})
	r.Command(chat.Command{Name: "schedules", Help: "This chat's schedules; /schedules pause or resume",
		Run: func(c *chat.Chat, in chat.Invocation) { m.schedulesCommand(c, in.Args, in.Msg.ID) }})
	r.OnEvent(func(c *chat.Chat, ev runner.Event) {
		away := m.away.Get(c)
		switch e := ev.(type) {
		case runner.RateLimit:
			if e.Status == "rejected" && !e.ResetsAt.IsZero() { // remembered for the retry offer (limitretry.go)
				away.rejection = &e
			}
		case runner.TurnCompleted:
			away.rejection = nil
		}
	})
	r.InterceptAnswer(func(c *chat.Chat, tc runner.TurnCompleted, replyTo int) bool { return m.answerLimit(c, tc, replyTo) })
	const wait = "untether is restarting; press again once it is back."
	r.StoredButton(btnRetryLimit, chat.StoredButton{Ack: "Will retry", Wait: wait, WaitFirst: true, Resolve: m.resolveAway(btnRetryLimit),
		Sample: m.sampleRetry})
	r.StoredButton(btnDropRetry, chat.StoredButton{Ack: "Dropped", Wait: wait, WaitFirst: true, Resolve: m.resolveAway(btnDropRetry),
		Sample: m.sampleRetry})
	r.StoredButton(btnDeleteSchedule, chat.StoredButton{Ack: "Deleting…", Wait: wait, WaitFirst: true, Resolve: m.resolveAway(btnDeleteSchedule),
		Sample: m.sampleSchedule})
}

// Start runs the scheduler until ctx ends (scheduler.go).
func (m *Module) Start(ctx context.Context) { m.runScheduler(ctx) }
