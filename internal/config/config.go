package config

import (
	"slices"
	"time"

	"github.com/untether/untether/internal/runner"
)

// Environment variables the daemon reads besides the file.
const (
	// EnvBotToken overrides telegram.bot_token, so the token can live in a
	// systemd EnvironmentFile (mode 0600) instead of the config file.
	EnvBotToken = "UNTETHER_TELEGRAM_BOT_TOKEN"
	// EnvConfigPath overrides DefaultPath's fallback location.
	EnvConfigPath = "UNTETHER_CONFIG"
)

// DefaultConfigPath is where the config lives when EnvConfigPath is unset.
const DefaultConfigPath = "~/.config/untether/untether.toml"

// Defaults. Every key that is not required has one; Default returns a Config
// filled with them and the example file documents them.
const (
	DefaultAPIURL       = "https://api.telegram.org"
	DefaultPollTimeout  = Duration(30 * time.Second)
	DefaultGroupTrigger = GroupTriggerMention
	// DefaultConflictGrace is how long a 409 Conflict (another poller on
	// the token) may last before the daemon gives up: long enough for the
	// old instance of a restart or a deploy to exit.
	DefaultConflictGrace = Duration(2 * time.Minute)
	// MinPollTimeout keeps long polling from degenerating into a busy loop of
	// getUpdates calls.
	MinPollTimeout = Duration(2 * time.Second)

	DefaultClaudeBinary    = "claude"
	DefaultPermissionMode  = PermissionDefault
	DefaultIdleTimeout     = Duration(30 * time.Minute)
	DefaultApprovalTimeout = Duration(15 * time.Minute)
	// DefaultLoginTimeout is how long /login waits for the sign-in: time
	// to open the link, sign in and send the code back.
	DefaultLoginTimeout        = Duration(10 * time.Minute)
	DefaultStopTimeout         = Duration(10 * time.Second)
	DefaultMaxLiveProcesses    = 16
	DefaultMaxConcurrentSpawns = 2

	DefaultProgressInterval = Duration(1 * time.Second)
	// MinGroupProgressInterval is the floor for progress edits in group chats:
	// Telegram allows about 20 messages per minute per group.
	MinGroupProgressInterval = Duration(3 * time.Second)
	// DefaultStallAfter and DefaultStallNotifyAfter: a turn silent this long
	// is shown as such, and then notified about.
	DefaultStallAfter       = Duration(5 * time.Minute)
	DefaultStallNotifyAfter = Duration(15 * time.Minute)
	DefaultMaxRows          = 8
	DefaultVerbose          = false
	DefaultOnFinish         = OnFinishFinalize
	DefaultTyping           = true
	DefaultDrafts           = true

	// DefaultMaxUploadMB is Telegram's own limit on files a bot may
	// download (getFile), so the default refuses nothing Telegram would
	// deliver.
	DefaultMaxUploadMB = 20
	// MaxUploadMBLimit is what a self-hosted Bot API server allows.
	MaxUploadMBLimit = 2000
	// DefaultUploadKeep is how long uploads stay in the workdir: a month.
	DefaultUploadKeep = Duration(720 * time.Hour)
	// DefaultOutboxKeep is how long files Claude sent stay in
	// <workdir>/.untether/sent: a week.
	DefaultOutboxKeep = Duration(7 * 24 * time.Hour)
	DefaultZipDirs    = true
	// DefaultMaxFilesPerTurn is how many files of Claude's outbox are sent
	// at the end of one turn: two albums.
	DefaultMaxFilesPerTurn = 20
	// MaxFilesPerTurnLimit bounds it: more files than this in one turn is
	// a flood, not a delivery.
	MaxFilesPerTurnLimit = 500

	// DefaultAlbumWait and DefaultForwardWait: how long untether collects
	// the parts of an album, or forwarded messages and their comment,
	// after the last one arrived.
	DefaultAlbumWait   = Duration(time.Second)
	DefaultForwardWait = Duration(time.Second)
	// MaxCollectWait bounds both: the user waits that long for an answer.
	MaxCollectWait = Duration(10 * time.Second)

	DefaultVoiceModel   = "whisper-1"
	DefaultVoiceFFmpeg  = "ffmpeg"
	DefaultVoiceMaxMB   = 10
	DefaultVoiceTimeout = Duration(2 * time.Minute)
	// MaxVoiceMB is what a bot may download from Telegram.
	MaxVoiceMB = 20

	DefaultStateDir = "~/.local/state/untether"

	DefaultShowResumeLine = true
	// DefaultContextWarnAt and DefaultContextFullAt are shares of the
	// context window, like budget.warn_at. The CLI compacts by itself at
	// about 97 % of a 1M window (runner's doc), so 95 % is "soon".
	DefaultContextWarnAt = 0.8
	DefaultContextFullAt = 0.95

	DefaultLogLevel  = LogInfo
	DefaultLogFormat = LogFormatAuto

	DefaultDrainTimeout = Duration(2 * time.Minute)

	DefaultRetryAfterLimit = RetryAsk
	// DefaultBudgetWarnAt is the share of a budget at which an answer warns.
	DefaultBudgetWarnAt = 0.8
	// DefaultUnreportedTurnUSD is what a turn whose cost the CLI never
	// reported is counted as: more than most turns cost, so a budget errs
	// on the side of stopping early.
	DefaultUnreportedTurnUSD = 1.0
	// DefaultMaxSchedulesPerChat bounds the schedules one chat can create.
	DefaultMaxSchedulesPerChat = 20
	DefaultScheduleCatchUp     = true
)

// RetryAfterLimit says what happens to a prompt a subscription limit
// rejected.
type RetryAfterLimit string

// The claude.retry_after_limit values.
const (
	// RetryAsk offers ⏰ Retry at the reset time and ✖️ Drop buttons.
	RetryAsk RetryAfterLimit = "ask"
	// RetryAuto sends the prompt again at the reset time without asking.
	RetryAuto RetryAfterLimit = "auto"
	// RetryOff only says when the limit resets.
	RetryOff RetryAfterLimit = "off"
)

// RetryAfterLimitValues lists every valid RetryAfterLimit.
var RetryAfterLimitValues = []RetryAfterLimit{RetryAsk, RetryAuto, RetryOff}

// PermissionMode is the Claude CLI's --permission-mode.
type PermissionMode string

// The permission modes the CLI accepts.
const (
	PermissionDefault     PermissionMode = "default"
	PermissionAcceptEdits PermissionMode = "acceptEdits"
	PermissionPlan        PermissionMode = "plan"
	PermissionBypass      PermissionMode = "bypassPermissions"
	PermissionDontAsk     PermissionMode = "dontAsk"
)

// PermissionModes lists every valid PermissionMode, in documentation order.
var PermissionModes = []PermissionMode{PermissionDefault, PermissionAcceptEdits, PermissionPlan, PermissionBypass, PermissionDontAsk}

// DefaultAllowedModes are the modes a chat may switch to unless the operator
// says otherwise: every mode except bypassPermissions, which runs any tool
// unasked and so must be the operator's explicit choice.
func DefaultAllowedModes() []PermissionMode {
	return []PermissionMode{PermissionDefault, PermissionAcceptEdits, PermissionPlan, PermissionDontAsk}
}

// GroupTrigger says which messages in a group chat are meant for the bot.
type GroupTrigger string

// The telegram.group_trigger values.
const (
	// GroupTriggerMention: only messages that mention the bot, reply to one
	// of its messages, or are commands.
	GroupTriggerMention GroupTrigger = "mention"
	// GroupTriggerAll: every message from an allowed user.
	GroupTriggerAll GroupTrigger = "all"
)

// GroupTriggers lists every valid GroupTrigger.
var GroupTriggers = []GroupTrigger{GroupTriggerMention, GroupTriggerAll}

// ServiceUserIDs are Telegram's own accounts that appear as the sender of
// messages nobody in particular wrote: 777000 (service notifications and
// posts forwarded from a linked channel), 1087968824 (GroupAnonymousBot,
// anonymous group admins) and 136817688 (Channel_Bot, messages sent on
// behalf of a channel). Allowing one of them allows whoever can post as it.
var ServiceUserIDs = map[int64]string{
	777000:     "Telegram's service account (also forwards from linked channels)",
	1087968824: "GroupAnonymousBot (any anonymous group admin)",
	136817688:  "Channel_Bot (anyone posting on behalf of a channel)",
}

// OnFinish says what happens to a turn's progress message once the answer is sent.
type OnFinish string

// The progress.on_finish values.
const (
	// OnFinishFinalize edits the progress message into a compact summary.
	OnFinishFinalize OnFinish = "finalize"
	// OnFinishDelete removes the progress message, leaving only the answer.
	OnFinishDelete OnFinish = "delete"
)

// OnFinishValues lists every valid OnFinish.
var OnFinishValues = []OnFinish{OnFinishFinalize, OnFinishDelete}

// LogLevel is the minimum level logged.
type LogLevel string

// The log.level values.
const (
	LogDebug LogLevel = "debug"
	LogInfo  LogLevel = "info"
	LogWarn  LogLevel = "warn"
	LogError LogLevel = "error"
)

// LogLevels lists every valid LogLevel, most verbose first.
var LogLevels = []LogLevel{LogDebug, LogInfo, LogWarn, LogError}

// LogFormat selects how log lines are written.
type LogFormat string

// The log.format values.
const (
	// LogFormatAuto writes console lines on a terminal and JSON otherwise
	// (journald, files, pipes).
	LogFormatAuto    LogFormat = "auto"
	LogFormatJSON    LogFormat = "json"
	LogFormatConsole LogFormat = "console"
)

// LogFormats lists every valid LogFormat.
var LogFormats = []LogFormat{LogFormatAuto, LogFormatJSON, LogFormatConsole}

// Config is the whole configuration file, decoded, defaulted and validated.
// Field tags are the file's keys; Diff, the key checks and the example-file
// test all walk them, so a new field is automatically part of the schema.
type Config struct {
	Telegram Telegram `toml:"telegram"`
	Claude   Claude   `toml:"claude"`
	Progress Progress `toml:"progress"`
	Render   Render   `toml:"render"`
	Files    Files    `toml:"files"`
	Voice    Voice    `toml:"voice"`
	State    State    `toml:"state"`
	Log      Log      `toml:"log"`
	Daemon   Daemon   `toml:"daemon"`
	// Budget and Scheduler are tables; Schedules and Triggers are arrays
	// of tables ([[schedules]], [[triggers]]): fields() treats each as a
	// single key.
	Budget    Budget    `toml:"budget"`
	Scheduler Scheduler `toml:"scheduler"`
	// HTTP is the local listener for metrics, health and webhooks
	// (service.go).
	HTTP      HTTP       `toml:"http"`
	Schedules []Schedule `toml:"schedules"`
	// Triggers are the [[triggers]] webhooks (service.go), a list section
	// like Schedules.
	Triggers []Trigger `toml:"triggers"`
	// Projects are the [projects.<name>] tables (projects.go); claude.workdir
	// is the project named "default" besides them.
	Projects map[string]Project `toml:"projects"`
}

// Telegram configures the bot and who may talk to it.
type Telegram struct {
	// BotToken is the token from @BotFather. Required; EnvBotToken overrides it.
	BotToken Secret `toml:"bot_token"`
	// APIURL is the Bot API server, without a trailing slash: the official one,
	// a self-hosted telegram-bot-api, or a test fake.
	APIURL string `toml:"api_url"`
	// AllowedUserIDs are the Telegram user ids served. Required unless
	// AllowAnyUser, because the bot runs a coding agent on this machine.
	AllowedUserIDs []int64 `toml:"allowed_user_ids"`
	// AllowAnyUser serves every user. Only for bots behind other controls.
	AllowAnyUser bool `toml:"allow_any_user"`
	// AllowedChatIDs are the group and supergroup chats served (their ids
	// are negative). Groups not listed are refused; private chats with an
	// allowed user are always served.
	AllowedChatIDs []int64 `toml:"allowed_chat_ids"`
	// GroupTrigger says which messages in a listed group reach Claude.
	GroupTrigger GroupTrigger `toml:"group_trigger"`
	// PollTimeout is the getUpdates long-poll timeout; at least MinPollTimeout.
	PollTimeout Duration `toml:"poll_timeout"`
	// ConflictGrace is how long getUpdates may keep failing with 409
	// Conflict (another poller on the token) before the daemon exits.
	ConflictGrace Duration `toml:"conflict_grace"`
	// AlbumWait is how long the parts of an album (one media_group_id) are
	// collected after the last one arrived, to become one prompt.
	AlbumWait Duration `toml:"album_wait"`
	// ForwardWait is how long forwarded messages, and a comment sent right
	// after them, are collected to become one prompt.
	ForwardWait Duration `toml:"forward_wait"`
	// Timezone is the IANA name of the users' time zone ("Europe/Paris"):
	// /usage days, budget days and months, reset times and /at read in it.
	// Empty means the host's.
	Timezone string `toml:"timezone"`
	// DefaultProject is the project a chat works in until it chooses
	// another with /project.
	DefaultProject string `toml:"default_project"`
	// TopicDefaultProject is the project of a forum topic that was not
	// bound to one; empty means DefaultProject.
	TopicDefaultProject string `toml:"topic_default_project"`
	// PinPanel pins the message /panel sends (in a group the bot needs the
	// right to pin messages), unpinning the one it replaces.
	PinPanel bool `toml:"pin_panel"`
}

// UserAllowed reports whether Telegram user id may use the bot.
func (t Telegram) UserAllowed(id int64) bool {
	return t.AllowAnyUser || slices.Contains(t.AllowedUserIDs, id)
}

// ChatAllowed reports whether the bot serves chat id: users' private
// chats have positive ids and are served; groups, supergroups and channels
// have negative ones and are served when allowed_chat_ids lists them.
func (t Telegram) ChatAllowed(id int64) bool {
	return id > 0 || slices.Contains(t.AllowedChatIDs, id)
}

// Location is the Timezone's location, the host's when it is empty (or,
// in a Config that did not validate, unknown).
func (t Telegram) Location() *time.Location {
	return LoadLocation(t.Timezone)
}

// Claude configures the Claude Code CLI processes, one per chat.
type Claude struct {
	// Binary is a command name looked up on PATH or an absolute path.
	Binary string `toml:"binary"`
	// Workdir is the directory of the project named "default". Required
	// unless [projects] has one; must exist.
	Workdir string `toml:"workdir"`
	// Home is HOME for the CLI (where ~/.claude with its login lives); empty
	// means the daemon's own HOME.
	Home string `toml:"home"`
	// PermissionMode is passed as --permission-mode unless the chat chose
	// another allowed mode with /mode. It must be in AllowedModes.
	PermissionMode PermissionMode `toml:"permission_mode"`
	// AllowedModes are the permission modes a chat may use: /mode refuses
	// others, and a mode the CLI switches to outside them is reverted.
	AllowedModes []PermissionMode `toml:"allowed_modes"`
	// Model is passed as --model when non-empty; empty leaves the CLI's choice.
	Model string `toml:"model"`
	// Models, if non-empty, are offered as buttons by /model without an
	// argument. Other names can still be typed.
	Models []string `toml:"models"`
	// Effort is passed as --effort unless the chat chose another level
	// with /effort: one of runner.Efforts (low, medium, high, xhigh, max).
	// Empty leaves the CLI's default (medium for the current models).
	Effort runner.Effort `toml:"effort"`
	// ExtraArgs are appended to the CLI command line. Flags untether manages
	// itself are rejected (see runner.CheckExtraArgs).
	ExtraArgs []string `toml:"extra_args"`
	// IdleTimeout closes a chat's CLI after this long without a turn; the next
	// message resumes the session, so only memory is saved.
	IdleTimeout Duration `toml:"idle_timeout"`
	// ApprovalTimeout denies a tool approval nobody answered and expires its buttons.
	ApprovalTimeout Duration `toml:"approval_timeout"`
	// LoginTimeout ends a /login that has not finished: the link, the
	// sign-in and the code sent back must all fit in it.
	LoginTimeout Duration `toml:"login_timeout"`
	// StopTimeout bounds each step of interrupt → SIGINT → SIGKILL and of
	// close → SIGTERM → SIGKILL.
	StopTimeout Duration `toml:"stop_timeout"`
	// MaxLiveProcesses caps running CLIs; beyond it the least recently used
	// idle ones are closed.
	MaxLiveProcesses int `toml:"max_live_processes"`
	// MaxConcurrentSpawns caps CLIs starting at once (each costs about a
	// CPU-second to start).
	MaxConcurrentSpawns int `toml:"max_concurrent_spawns"`
	// Env is extra environment for the CLI. It may not carry the bot token.
	Env map[string]string `toml:"env"`
	// RetryAfterLimit says what happens to a prompt a subscription limit
	// rejected (rate_limit_event "rejected" with a reset time).
	RetryAfterLimit RetryAfterLimit `toml:"retry_after_limit"`
}

// ModeAllowed reports whether the operator allows mode (claude.allowed_modes).
func (c Claude) ModeAllowed(mode PermissionMode) bool {
	return slices.Contains(c.AllowedModes, mode)
}

// Progress configures the live progress message shown while a turn runs.
type Progress struct {
	// Interval is the minimum time between progress edits in private chats;
	// see IntervalFor for groups.
	Interval Duration `toml:"interval"`
	// MaxRows is how many tool rows are shown.
	MaxRows int `toml:"max_rows"`
	// Verbose also shows thinking and tool-result previews.
	Verbose bool `toml:"verbose"`
	// OnFinish says what happens to the progress message when the answer is sent.
	OnFinish OnFinish `toml:"on_finish"`
	// Typing sends a typing indicator while a turn runs.
	Typing bool `toml:"typing"`
	// Drafts streams the answer in private chats as a Telegram draft, shown
	// as being typed, instead of in the progress message.
	Drafts bool `toml:"drafts"`
	// StallAfter is how long a running turn may go without any output
	// (tool_progress heartbeats count) before its progress message says so
	// and names what runs.
	StallAfter Duration `toml:"stall_after"`
	// StallNotifyAfter is how long without output before untether sends one
	// notifying message offering Cancel or Keep waiting.
	StallNotifyAfter Duration `toml:"stall_notify_after"`
}

// IntervalFor returns the minimum time between progress edits in a chat:
// Interval for private chats, at least MinGroupProgressInterval for groups.
func (p Progress) IntervalFor(group bool) time.Duration {
	if group && p.Interval < MinGroupProgressInterval {
		return MinGroupProgressInterval.Std()
	}
	return p.Interval.Std()
}

// Render configures what answers show.
type Render struct {
	// ShowResumeLine puts the command that resumes the session at a
	// terminal (cd <dir> && claude --resume <id>, as the places module
	// builds it) and a 💻 Terminal button under each answer.
	ShowResumeLine bool `toml:"show_resume_line"`
	// ContextWarnAt is the share of the context window (0 < x < 1) at
	// which an answer's footer warns and the answer offers a Compact
	// button.
	ContextWarnAt float64 `toml:"context_warn_at"`
	// ContextFullAt is the share (above ContextWarnAt, at most 1) at which
	// the warning also says what happens next: the CLI compacts the
	// conversation by itself, or, with compaction off, turns fail.
	ContextFullAt float64 `toml:"context_full_at"`
}

// Files configures files users send to the bot, and files it sends back.
type Files struct {
	// MaxUploadMB is the largest file accepted, in megabytes (2^20 bytes).
	MaxUploadMB int `toml:"max_upload_mb"`
	// Keep is how long saved uploads stay in <workdir>/.untether/uploads.
	Keep Duration `toml:"keep"`
	// OutboxKeep is how long files Claude sent to the chat (through
	// <workdir>/.untether/outbox) stay in <workdir>/.untether/sent.
	OutboxKeep Duration `toml:"outbox_keep"`
	// Deny lists the paths /get refuses, as globs relative to the project
	// (see internal/pathglob): secrets such as .env files and keys.
	Deny []string `toml:"deny"`
	// ZipDirs lets /get send a directory as a zip archive.
	ZipDirs bool `toml:"zip_dirs"`
	// MaxFilesPerTurn is how many files Claude left in its outbox are
	// sent when one turn ends; the rest are moved to .untether/sent and
	// counted in one "not sent" message.
	MaxFilesPerTurn int `toml:"max_files_per_turn"`
	// ExportInGroups lets /export send a session's conversation in groups
	// and forum topics, where everyone in them reads it; off, /export
	// works in private chats only.
	ExportInGroups bool `toml:"export_in_groups"`
}

// DefaultDeny is [files] deny's default: common places secrets live.
func DefaultDeny() []string {
	return []string{".env*", "*.pem", "*.key", ".ssh/**", ".git/**", ".netrc", ".npmrc", ".pypirc"}
}

// Voice configures the transcription of voice notes. Set APIURL (an
// OpenAI-compatible transcription endpoint) or Command (a local program),
// not both; with neither, voice notes are answered with how to enable them.
type Voice struct {
	// APIURL is the transcription endpoint, e.g.
	// https://api.openai.com/v1/audio/transcriptions.
	APIURL string `toml:"api_url"`
	// APIKey is sent as a bearer token. APIKeyEnv names an environment
	// variable to read it from instead; Parse resolves it into APIKey.
	APIKey    Secret `toml:"api_key"`
	APIKeyEnv string `toml:"api_key_env"`
	// Model and Language are sent as the endpoint's model and language
	// fields; an empty Language lets it detect the language.
	Model    string `toml:"model"`
	Language string `toml:"language"`
	// Command is a program and its arguments; "{wav}" in an argument is
	// replaced by the path of the note converted to 16 kHz mono WAV. It
	// prints the transcript on stdout.
	Command []string `toml:"command"`
	// FFmpeg converts the note for Command: a name on PATH or an absolute path.
	FFmpeg string `toml:"ffmpeg"`
	// MaxMB is the largest voice note, audio file or video note transcribed.
	MaxMB int `toml:"max_mb"`
	// Timeout bounds one transcription (download excluded).
	Timeout Duration `toml:"timeout"`
}

// Enabled reports whether voice notes are transcribed.
func (v Voice) Enabled() bool { return v.APIURL != "" || len(v.Command) > 0 }

// MaxBytes is MaxMB in bytes.
func (v Voice) MaxBytes() int64 { return int64(v.MaxMB) << 20 }

// MaxUploadBytes is MaxUploadMB in bytes.
func (f Files) MaxUploadBytes() int64 { return int64(f.MaxUploadMB) << 20 }

// State configures where the daemon keeps its database.
type State struct {
	// Dir holds the state database; created if missing.
	Dir string `toml:"dir"`
	// Retention is how long decided approvals (the audit log) and turn
	// records are kept; older ones are pruned at start and daily.
	Retention Duration `toml:"retention"`
}

// DefaultRetention keeps the audit log and turn records for 90 days.
const DefaultRetention = Duration(90 * 24 * time.Hour)

// Log configures logging.
type Log struct {
	// Level is the minimum level logged.
	Level LogLevel `toml:"level"`
	// Format selects console or JSON lines.
	Format LogFormat `toml:"format"`
}

// Daemon configures the process lifecycle.
type Daemon struct {
	// DrainTimeout is how long running turns may finish after SIGTERM before
	// they are interrupted.
	DrainTimeout Duration `toml:"drain_timeout"`
}

// Budget caps what Claude may spend, as the CLI reports it (total_cost_usd).
// Days and months are counted in telegram.timezone. It caps all projects
// together; a project's own budget ([projects.<name>.budget]) caps it
// further.
type Budget struct {
	// DailyUSD is the most all chats together may spend per day; 0: no cap.
	DailyUSD float64 `toml:"daily_usd"`
	// MonthlyUSD is the most all chats together may spend per calendar
	// month; 0: no cap.
	MonthlyUSD float64 `toml:"monthly_usd"`
	// WarnAt is the share of a budget (0 < WarnAt <= 1) at which an answer
	// says so, once per day or month.
	WarnAt float64 `toml:"warn_at"`
	// UnreportedTurnUSD is what a turn is counted as when its CLI died
	// before it reported the turn's cost (killed, crashed): never more
	// than what that CLI's --max-budget-usd still allowed.
	UnreportedTurnUSD float64 `toml:"unreported_turn_usd"`
}

// Enabled reports whether any budget is set.
func (b Budget) Enabled() bool { return b.DailyUSD > 0 || b.MonthlyUSD > 0 }

// Scheduler configures scheduled prompts (/at, /every and [[schedules]]).
type Scheduler struct {
	// MaxPerChat is how many schedules one chat or topic may have.
	MaxPerChat int `toml:"max_per_chat"`
	// CatchUp runs a schedule once at start when runs were missed while
	// the daemon was down; false skips them.
	CatchUp bool `toml:"catch_up"`
}

// Schedule is one [[schedules]] entry: a prompt sent to a chat on a cron
// schedule.
type Schedule struct {
	// Chat is the chat id: a user's id for their private chat, or a
	// group's (negative) id. It must be allowed.
	Chat int64 `toml:"chat"`
	// Thread is the forum topic, 0 for none.
	Thread int64 `toml:"thread"`
	// Project, when set, is where each run works: the chat (or topic) is
	// switched to it first, as /project does, unless it already works
	// there. Empty runs wherever the chat works at the time.
	Project string `toml:"project"`
	// Cron is a 5-field cron expression ("0 9 * * 1-5") or a descriptor
	// ("@daily", "@every 2h").
	Cron string `toml:"cron"`
	// Prompt is the message sent to Claude.
	Prompt string `toml:"prompt"`
	// Timezone is the IANA zone Cron is read in; empty means
	// telegram.timezone.
	Timezone string `toml:"timezone"`
	// FreshSession starts each run in a new session instead of the chat's.
	FreshSession bool `toml:"fresh_session"`
}
