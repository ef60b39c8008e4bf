package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge"
	"github.com/untether/untether/internal/bridge/logx"
	"github.com/untether/untether/internal/bridge/notify"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner"
)

// Set with -ldflags "-X main.version=… -X main.commit=… -X main.date=…".
var (
	version = "dev"
	commit  = "unknown"
	date    = "unknown"
)

// Exit codes, distinct per failure class so systemd logs and Restart=
// policies can tell them apart.
const (
	exitOK      = 0
	exitRuntime = 1  // the daemon failed while running
	exitUsage   = 2  // bad command line
	exitConfig  = 10 // the config file is missing or invalid
	exitState   = 11 // the state directory cannot be used (or is locked)
	exitFatalTG = 12 // Telegram refused the token, or another poller runs
)

// drainMargin is how much longer than drain_timeout a stop may take: time to
// interrupt what still runs at the deadline, close the CLIs and flush the
// outbox, which bridge.Shutdown bounds by its stopBudget (22 s) once its
// context ends. systemd hears drain_timeout+drainMargin as
// EXTEND_TIMEOUT_USEC, and the units' TimeoutStopSec exceeds the default
// drain_timeout by more.
const drainMargin = 30 * time.Second

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	cmd := "run"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "run":
		return runDaemon(args, stdout, stderr)
	case "check":
		return runCheck(args, stdout, stderr)
	case "version":
		if code, ok := parseFlags(flag.NewFlagSet("version", flag.ContinueOnError), args, stdout, stderr); !ok {
			return code
		}
		fmt.Fprintf(stdout, "untether %s (commit %s, built %s, %s)\n", version, commit, date, runtime.Version())
		return exitOK
	case "help":
		return runHelp(args, stdout, stderr) // usage.go
	}
	fmt.Fprintf(stderr, "untether: unknown command %q\n\n%s", cmd, usage)
	return exitUsage
}

func configFlag(fs *flag.FlagSet) *string {
	return fs.String("config", config.DefaultPath(os.Getenv), "path to untether.toml")
}

func runDaemon(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("run", flag.ContinueOnError)
	path := configFlag(flags)
	if code, ok := parseFlags(flags, args, stdout, stderr); !ok {
		return code
	}
	setUndumpable(stderr)
	cfg, err := config.Load(*path, os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "untether: %v\n", err)
		if errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(stderr, "untether: %s\n", missingConfigHint)
		}
		return exitConfig
	}
	log, redactor := newLogger(cfg, os.Stderr)

	// Signals are caught from here on, so a stop during start-up is a clean
	// stop rather than a kill; they are handled once the bridge exists.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	unlock, err := state.Lock(cfg.State.Dir)
	if err != nil {
		msg := "cannot lock the state directory"
		if errors.Is(err, state.ErrLocked) {
			msg = "another untether is already running with this state directory; stop it first (systemctl stop untether)"
		}
		log.Error().Err(err).Str("dir", cfg.State.Dir).Msg(msg)
		return exitState
	}
	defer unlock() //nolint:errcheck // the lock dies with the process anyway
	store, err := state.Open(context.Background(), cfg.State.Dir)
	if err != nil {
		log.Error().Err(err).Str("dir", cfg.State.Dir).Msg("open state")
		return exitState
	}
	defer store.Close()

	if err := runner.EnableSubreaper(); err != nil {
		log.Warn().Err(err).Msg("cannot become a child subreaper; escaped CLI children may outlive their session")
	}
	users := len(cfg.Telegram.AllowedUserIDs)
	log.Info().Str("version", version).Str("commit", commit).Str("config", *path).
		Int("allowed_users", users).Bool("allow_any_user", cfg.Telegram.AllowAnyUser).
		Str("state_dir", cfg.State.Dir).Msg("untether starting")

	sd := notify.New()
	ready := make(chan struct{})
	var readyOnce sync.Once
	svc := newOps(cfg, log)                                             // service.go: [http] listen
	defer probeClaudeVersion(&log, cfg.Claude.Binary, svc.cliVersion)() // claude_version.go: beside the start-up, not before it
	opts := bridge.Options{
		Config: cfg, Store: store, Logger: log, InheritEnv: os.Environ(),
		Pool: runner.NewPool(cfg.Claude.MaxLiveProcesses, cfg.Claude.MaxConcurrentSpawns),
		Ready: func() {
			readyOnce.Do(func() {
				svc.ready()
				_ = sd.Ready()
				close(ready)
				log.Info().Msg("serving Telegram updates")
			})
		},
	}
	svc.bridgeOptions(&opts)
	b, err := bridge.New(opts)
	if err != nil {
		log.Error().Err(err).Msg("create bridge")
		return exitRuntime
	}
	if err := svc.start(cfg, b, log); err != nil {
		log.Error().Err(err).Str("listen", cfg.HTTP.Listen).Msg("cannot serve http.listen")
		return exitRuntime
	}
	defer svc.stop(&log)

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	drainCtx, forceStop := context.WithCancel(context.Background())
	defer forceStop()
	var stopping atomic.Bool
	drainRequested := make(chan struct{})
	go func() {
		signals := 0
		for sig := range sigs {
			if sig == syscall.SIGHUP {
				reload(*path, b, svc, &log, redactor)
				continue
			}
			signals++
			switch signals {
			case 1:
				stopping.Store(true)
				svc.draining()
				drain := b.Config().Daemon.DrainTimeout.Std()
				log.Info().Str("signal", sig.String()).Dur("drain_timeout", drain).
					Msg("stopping: finishing running turns (send the signal again to stop at once)")
				_ = sd.Stopping(drain + drainMargin)
				st := b.Stats()
				_ = sd.Status(fmt.Sprintf("stopping: waiting for %d running turns (%d pending approvals)", st.Running, st.PendingApprovals))
				close(drainRequested)
			case 2:
				log.Warn().Str("signal", sig.String()).Msg("second signal: interrupting running turns now")
				forceStop()
			default:
				// Last resort if the interrupt itself hangs. Every state
				// write is an SQLite transaction, so exiting mid-write
				// loses at most that write and corrupts nothing; the
				// flock dies with the process.
				log.Error().Str("signal", sig.String()).Msg("third signal: exiting without waiting for the CLIs")
				os.Exit(exitRuntime)
			}
		}
	}()
	go watchdog(ctx, ready, b, sd, &log)

	// The drain runs while Run keeps polling: button presses still reach
	// running turns, and messages written meanwhile get a notice and are
	// kept for the next start. Polling stops once the drain is over.
	runDone := make(chan error, 1)
	go func() { runDone <- b.Run(ctx) }()
	var runErr error
	finished := false
	select {
	case runErr = <-runDone:
		finished = true
	case <-drainRequested:
	}
	drain, cancel := context.WithTimeout(drainCtx, b.Config().Daemon.DrainTimeout.Std())
	defer cancel()
	if err := b.Shutdown(drain); err != nil {
		log.Error().Err(err).Msg("shutdown left work undone")
	}
	stop()
	if !finished {
		runErr = <-runDone
	}
	if runErr != nil && stopping.Load() && errors.Is(runErr, context.Canceled) {
		runErr = nil // stopped during start-up (getMe, reconcile): not a failure
	}
	if runErr != nil {
		log.Error().Err(runErr).Msg("untether stopped on an error")
		if errors.Is(runErr, bridge.ErrFatalTelegram) {
			return exitFatalTG
		}
		return exitRuntime
	}
	log.Info().Msg("untether stopped")
	return exitOK
}

// newLogger is the daemon's logger, with every secret of cfg (the bot
// token, the voice API key) redacted from what it writes.
func newLogger(cfg *config.Config, out *os.File) (zerolog.Logger, *logx.Redactor) {
	return logx.New(string(cfg.Log.Level), logx.Format(cfg.Log.Format), out, cfg.Secrets()...)
}

// reload applies the safe subset of a changed config file (SIGHUP), the
// webhooks' triggers included. The secrets it brings (a new voice API key,
// a trigger's secret) are redacted from then on.
func reload(path string, b *bridge.Bridge, svc *ops, log *zerolog.Logger, redactor *logx.Redactor) {
	next, err := config.Load(path, os.Getenv)
	if err != nil {
		log.Error().Err(err).Msg("reload: keeping the running configuration")
		return
	}
	redactor.Add(next.Secrets()...)
	cur := b.Config()
	reloadable, restart := cur.Diff(next)
	// Keys that need a restart keep their running values.
	b.Reload(cur.Reloaded(next))
	svc.reload(b.Config(), log) // service.go
	logx.SetLevel(string(next.Log.Level))
	log.Info().Strs("applied", reloadable).Strs("need_restart", restart).Msg("configuration reloaded")
}

// watchdog pets systemd's watchdog while the daemon makes progress, logs
// what stops it (progressLog) and keeps STATUS= current. Before the first successful poll (ready) there is
// nothing to judge yet: start-up is bounded by systemd's TimeoutStartSec.
func watchdog(ctx context.Context, ready <-chan struct{}, b *bridge.Bridge, sd *notify.Notifier, log *zerolog.Logger) {
	interval := notify.WatchdogInterval()
	status := 10 * time.Second
	if interval > 0 && interval < status {
		status = interval
	}
	tick := time.NewTicker(status)
	defer tick.Stop()
	stuck := progressLog{log: log}
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			st := b.Stats()
			status := fmt.Sprintf("%d chats, %d running turns, %d pending approvals", st.Chats, st.Running, st.PendingApprovals)
			if trouble := b.PollTrouble(now); trouble != "" {
				status = trouble + "; " + status
			}
			_ = sd.Status(status)
			select {
			case <-ready:
			default:
				continue
			}
			if stuck.healthy(b.Healthy(now), interval > 0, now) && interval > 0 {
				_ = sd.Watchdog()
			}
		}
	}
}

// progressLog logs what Healthy finds. Its text is the operator's alone
// (it names a wedged chat, which /healthz keeps to itself), so the log
// gets it with or without systemd: under a watchdog at every withheld pet,
// as systemd's restart follows soon; without one, where nothing restarts
// the daemon, when the trouble starts and then every progressLogEvery
// while it lasts (its text carries counts that change at every tick, so
// it is not compared), and once when it ends.
type progressLog struct {
	log    *zerolog.Logger
	logged time.Time // when the trouble was last logged without a watchdog; zero while there is none
}

// progressLogEvery is how often trouble that lasts is logged again
// without a watchdog.
const progressLogEvery = 5 * time.Minute

// healthy logs err as above and says whether the daemon makes progress.
func (p *progressLog) healthy(err error, watched bool, now time.Time) bool {
	switch {
	case err == nil:
		if !p.logged.IsZero() {
			p.log.Info().Msg("the daemon is making progress again")
		}
		p.logged = time.Time{}
		return true
	case watched:
		p.log.Error().Err(err).Msg("not petting the systemd watchdog: the daemon is not making progress")
	case p.logged.IsZero() || now.Sub(p.logged) >= progressLogEvery:
		p.logged = now
		p.log.Error().Err(err).Msg("the daemon is not making progress")
	}
	return false
}
