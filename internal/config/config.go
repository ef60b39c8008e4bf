package config

import "time"

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
	DefaultAPIURL      = "https://api.telegram.org"
	DefaultPollTimeout = Duration(30 * time.Second)
	// MinPollTimeout keeps long polling from degenerating into a busy loop of
	// getUpdates calls.
	MinPollTimeout = Duration(2 * time.Second)

	DefaultClaudeBinary        = "claude"
	DefaultPermissionMode      = PermissionDefault
	DefaultIdleTimeout         = Duration(30 * time.Minute)
	DefaultApprovalTimeout     = Duration(15 * time.Minute)
	DefaultStopTimeout         = Duration(10 * time.Second)
	DefaultMaxLiveProcesses    = 16
	DefaultMaxConcurrentSpawns = 2

	DefaultProgressInterval = Duration(1 * time.Second)
	// MinGroupProgressInterval is the floor for progress edits in group chats:
	// Telegram allows about 20 messages per minute per group.
	MinGroupProgressInterval = Duration(3 * time.Second)
	DefaultMaxRows           = 8
	DefaultVerbose           = false
	DefaultOnFinish          = OnFinishFinalize
	DefaultTyping            = true

	DefaultStateDir = "~/.local/state/untether"

	DefaultLogLevel  = LogInfo
	DefaultLogFormat = LogFormatAuto

	DefaultDrainTimeout = Duration(2 * time.Minute)
)

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
	State    State    `toml:"state"`
	Log      Log      `toml:"log"`
	Daemon   Daemon   `toml:"daemon"`
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
	// AllowedChatIDs, if non-empty, restricts service to these chats (groups
	// have negative ids), on top of the user check.
	AllowedChatIDs []int64 `toml:"allowed_chat_ids"`
	// PollTimeout is the getUpdates long-poll timeout; at least MinPollTimeout.
	PollTimeout Duration `toml:"poll_timeout"`
}

// Claude configures the Claude Code CLI processes, one per chat.
type Claude struct {
	// Binary is a command name looked up on PATH or an absolute path.
	Binary string `toml:"binary"`
	// Workdir is the project directory the CLI works in. Required; must exist.
	Workdir string `toml:"workdir"`
	// Home is HOME for the CLI (where ~/.claude with its login lives); empty
	// means the daemon's own HOME.
	Home string `toml:"home"`
	// PermissionMode is passed as --permission-mode.
	PermissionMode PermissionMode `toml:"permission_mode"`
	// Model is passed as --model when non-empty; empty leaves the CLI's choice.
	Model string `toml:"model"`
	// ExtraArgs are appended to the CLI command line. Flags untether manages
	// itself are rejected (see runner.CheckExtraArgs).
	ExtraArgs []string `toml:"extra_args"`
	// IdleTimeout closes a chat's CLI after this long without a turn; the next
	// message resumes the session, so only memory is saved.
	IdleTimeout Duration `toml:"idle_timeout"`
	// ApprovalTimeout denies a tool approval nobody answered and expires its buttons.
	ApprovalTimeout Duration `toml:"approval_timeout"`
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
}

// IntervalFor returns the minimum time between progress edits in a chat:
// Interval for private chats, at least MinGroupProgressInterval for groups.
func (p Progress) IntervalFor(group bool) time.Duration {
	if group && p.Interval < MinGroupProgressInterval {
		return MinGroupProgressInterval.Std()
	}
	return p.Interval.Std()
}

// State configures where the daemon keeps its database.
type State struct {
	// Dir holds the state database; created if missing.
	Dir string `toml:"dir"`
}

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

// Default returns a Config holding every default. The required keys
// (telegram.bot_token, telegram.allowed_user_ids, claude.workdir) are empty,
// and paths are not yet ~-expanded, so Default alone does not validate.
func Default() Config {
	return Config{
		Telegram: Telegram{
			APIURL:      DefaultAPIURL,
			PollTimeout: DefaultPollTimeout,
		},
		Claude: Claude{
			Binary:              DefaultClaudeBinary,
			PermissionMode:      DefaultPermissionMode,
			IdleTimeout:         DefaultIdleTimeout,
			ApprovalTimeout:     DefaultApprovalTimeout,
			StopTimeout:         DefaultStopTimeout,
			MaxLiveProcesses:    DefaultMaxLiveProcesses,
			MaxConcurrentSpawns: DefaultMaxConcurrentSpawns,
		},
		Progress: Progress{
			Interval: DefaultProgressInterval,
			MaxRows:  DefaultMaxRows,
			Verbose:  DefaultVerbose,
			OnFinish: DefaultOnFinish,
			Typing:   DefaultTyping,
		},
		State:  State{Dir: DefaultStateDir},
		Log:    Log{Level: DefaultLogLevel, Format: DefaultLogFormat},
		Daemon: Daemon{DrainTimeout: DefaultDrainTimeout},
	}
}
