package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner"
	"github.com/untether/untether/internal/telegramtest"
)

// These tests run the real untether binary as a subprocess, the way systemd
// or a user's shell does: built once in TestMain with -ldflags like a
// release, configured through a TOML file, driven by signals, and watched
// through its exit code, its stderr and a fake NOTIFY_SOCKET. Telegram is the
// in-process fake Bot API; Claude is the real pinned CLI against the fake
// Anthropic API (claudetest), or a stub script where only `--version` runs.

var update = flag.Bool("update", false, "rewrite the golden files under testdata/check")

// The -ldflags values the test binary is built with.
const (
	testVersion = "test-1.2.3"
	testCommit  = "c0ffee0"
	testDate    = "2026-01-02T03:04:05Z"
)

// wait bounds how long any condition may take before the test fails. It
// never decides a pass: every wait ends as soon as its condition holds.
const wait = 90 * time.Second

// binary is the untether executable built by TestMain.
var binary string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "untether-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "untether tests:", err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "untether")
	if err := buildBinary(binary); err != nil {
		fmt.Fprintln(os.Stderr, "untether tests:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildBinary compiles this package like a release build. Under -race the
// daemon is built with the race detector too, so the subprocess tests check
// the real wiring for races, not only the test process.
func buildBinary(out string) error {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("find the go command to build untether: %w", err)
	}
	args := []string{"build", "-o", out, "-ldflags",
		"-X main.version=" + testVersion + " -X main.commit=" + testCommit + " -X main.date=" + testDate}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command(goTool, append(args, ".")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return nil
}

// syncBuffer collects a subprocess's output while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	// changed is closed and replaced on every write, so waiters need no
	// polling.
	changed chan struct{}
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{changed: make(chan struct{})} }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	close(b.changed)
	b.changed = make(chan struct{})
	return n, err
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *syncBuffer) snapshot() (string, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String(), b.changed
}

// logLine is one JSON line the daemon logged; raw keeps lines that are not
// JSON (a panic, a race report).
type logLine struct {
	raw    string
	fields map[string]any
}

func (l logLine) str(key string) string {
	s, _ := l.fields[key].(string)
	return s
}

func (l logLine) strs(key string) []string {
	var out []string
	if list, ok := l.fields[key].([]any); ok {
		for _, v := range list {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func (l logLine) ints(key string) []int {
	var out []int
	if list, ok := l.fields[key].([]any); ok {
		for _, v := range list {
			if f, ok := v.(float64); ok {
				out = append(out, int(f))
			}
		}
	}
	return out
}

func (l logLine) num(key string) int64 {
	f, _ := l.fields[key].(float64)
	return int64(f)
}

func parseLog(s string) []logLine {
	var out []logLine
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		l := logLine{raw: sc.Text()}
		_ = json.Unmarshal(sc.Bytes(), &l.fields)
		out = append(out, l)
	}
	return out
}

// process is one running untether subprocess.
type process struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdout *syncBuffer
	stderr *syncBuffer
	done   chan struct{}
	code   int
}

// baseEnv is the whole environment a subprocess gets: nothing from the
// developer's shell leaks in (an UNTETHER_TELEGRAM_BOT_TOKEN, a NOTIFY_SOCKET
// of the test runner's own service), only PATH and a private HOME.
func baseEnv(home string, extra ...string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8"}
	if raceEnabled {
		// A race in the daemon makes it exit 66, which every exit code
		// assertion notices.
		env = append(env, "GORACE=halt_on_error=1 exitcode=66")
	}
	return append(env, extra...)
}

// startProcess runs the binary with args in its own process group. The
// test's cleanup kills the group and reports the output if the process is
// still running, so a failing test never leaves a daemon behind.
func startProcess(t *testing.T, env []string, args ...string) *process {
	t.Helper()
	return startCommand(t, exec.Command(binary, args...), env)
}

// startCommand is startProcess for a prepared command (another path to the
// binary, a Credential in its SysProcAttr).
func startCommand(t *testing.T, cmd *exec.Cmd, env []string) *process {
	t.Helper()
	args := cmd.Args[1:]
	cmd.Env = env
	if cmd.Dir == "" {
		cmd.Dir = t.TempDir() // never a directory the daemon or Claude should use
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	p := &process{t: t, cmd: cmd, stdout: newSyncBuffer(), stderr: newSyncBuffer(), done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	require.NoError(t, cmd.Start())
	go func() {
		err := cmd.Wait()
		p.code = exitCode(err)
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			t.Errorf("untether (pid %d) still running at the end of the test; killing it", cmd.Process.Pid)
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
		if t.Failed() {
			t.Logf("untether %s stderr:\n%s", strings.Join(args, " "), p.stderr.String())
		}
	})
	return p
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return -1
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) signal(sig syscall.Signal) {
	p.t.Helper()
	require.NoError(p.t, p.cmd.Process.Signal(sig), "signal untether")
}

// exited reports whether the process has exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitExit waits for the process to exit and returns its exit code.
func (p *process) waitExit() int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(wait):
		p.t.Fatalf("untether did not exit within %v", wait)
	}
	require.NotContains(p.t, p.stderr.String(), "WARNING: DATA RACE")
	return p.code
}

func (p *process) logs() []logLine { return parseLog(p.stderr.String()) }

// waitLog waits until the daemon logged a line satisfying pred and returns
// it. It fails the test if the process exits first.
func (p *process) waitLog(what string, pred func(logLine) bool) logLine {
	p.t.Helper()
	deadline := time.After(wait)
	for {
		s, changed := p.stderr.snapshot()
		for _, l := range parseLog(s) {
			if pred(l) {
				return l
			}
		}
		select {
		case <-changed:
		case <-p.done:
			// One last look: the line may have landed with the exit.
			for _, l := range p.logs() {
				if pred(l) {
					return l
				}
			}
			p.t.Fatalf("untether exited (code %d) before logging %s", p.code, what)
		case <-deadline:
			p.t.Fatalf("untether did not log %s within %v", what, wait)
		}
	}
}

func msgIs(msg string) func(logLine) bool {
	return func(l logLine) bool { return l.str("message") == msg }
}

// notifySocket is a fake systemd NOTIFY_SOCKET: a unixgram socket whose
// datagrams the test can wait for.
type notifySocket struct {
	t    *testing.T
	path string
	mu   sync.Mutex
	msgs []string
	// changed is closed and replaced on every datagram.
	changed chan struct{}
}

func newNotifySocket(t *testing.T) *notifySocket {
	t.Helper()
	// A short directory: a socket path must fit in 108 bytes.
	dir, err := os.MkdirTemp("", "sdn")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	n := &notifySocket{t: t, path: filepath.Join(dir, "notify"), changed: make(chan struct{})}
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: n.path, Net: "unixgram"})
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	go func() {
		buf := make([]byte, 64*1024)
		for {
			k, _, err := conn.ReadFromUnix(buf)
			if err != nil {
				return
			}
			n.mu.Lock()
			n.msgs = append(n.msgs, string(buf[:k]))
			close(n.changed)
			n.changed = make(chan struct{})
			n.mu.Unlock()
		}
	}()
	return n
}

func (n *notifySocket) messages() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.msgs)
}

// waitFor waits for a datagram satisfying pred and returns its index.
func (n *notifySocket) waitFor(what string, pred func(string) bool) int {
	n.t.Helper()
	deadline := time.After(wait)
	for {
		n.mu.Lock()
		for i, m := range n.msgs {
			if pred(m) {
				n.mu.Unlock()
				return i
			}
		}
		ch := n.changed
		n.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			n.t.Fatalf("no sd_notify %s within %v; got %q", what, wait, n.messages())
		}
	}
}

// daemonConfig is what a test puts in untether.toml.
type daemonConfig struct {
	Token        string // omitted when empty (the token then comes from the environment)
	APIURL       string
	Users        []int64
	Binary       string
	Workdir      string
	Home         string
	Env          map[string]string
	StateDir     string
	DrainTimeout string
	StopTimeout  string
	PollTimeout  string
	MaxRows      int
	LogLevel     string
	// TelegramExtra and ClaudeExtra are raw lines added to those sections;
	// Tables is raw TOML at the end ([projects.<name>] tables, a [voice]
	// section).
	TelegramExtra, ClaudeExtra, Tables string
}

func (c daemonConfig) toml() string {
	var b strings.Builder
	b.WriteString("[telegram]\n")
	if c.Token != "" {
		fmt.Fprintf(&b, "bot_token = %q\n", c.Token)
	}
	fmt.Fprintf(&b, "api_url = %q\n", c.APIURL)
	users := make([]string, len(c.Users))
	for i, u := range c.Users {
		users[i] = strconv.FormatInt(u, 10)
	}
	fmt.Fprintf(&b, "allowed_user_ids = [%s]\n", strings.Join(users, ", "))
	fmt.Fprintf(&b, "poll_timeout = %q\n", or(c.PollTimeout, "2s"))
	b.WriteString(c.TelegramExtra)
	b.WriteString("\n[claude]\n")
	fmt.Fprintf(&b, "binary = %q\nworkdir = %q\n", c.Binary, c.Workdir)
	if c.Home != "" {
		fmt.Fprintf(&b, "home = %q\n", c.Home)
	}
	fmt.Fprintf(&b, "stop_timeout = %q\n", or(c.StopTimeout, "10s"))
	keys := make([]string, 0, len(c.Env))
	for k := range c.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b.WriteString("env = {")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %s = %q", k, c.Env[k])
	}
	b.WriteString(" }\n")
	b.WriteString(c.ClaudeExtra)
	b.WriteString("\n[progress]\ninterval = \"300ms\"\n")
	if c.MaxRows > 0 {
		fmt.Fprintf(&b, "max_rows = %d\n", c.MaxRows)
	}
	fmt.Fprintf(&b, "\n[state]\ndir = %q\n", c.StateDir)
	fmt.Fprintf(&b, "\n[log]\nlevel = %q\nformat = \"json\"\n", or(c.LogLevel, "info"))
	fmt.Fprintf(&b, "\n[daemon]\ndrain_timeout = %q\n", or(c.DrainTimeout, "1m"))
	b.WriteString(c.Tables)
	return b.String()
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// stubClaude writes a shell script that answers `--version` like the CLI,
// and `auth status` like a CLI logged in with an API key (the real CLI's
// output, see internal/runner/testdata/auth-status), for tests that never
// start a Claude session.
func stubClaude(t *testing.T, dir, version string) string {
	t.Helper()
	p := filepath.Join(dir, "claude")
	script := "#!/bin/sh\nif [ \"$1 $2\" = 'auth status' ]; then\n" +
		`  echo '{"loggedIn": true, "authMethod": "api_key", "apiProvider": "firstParty", "loginExpiresAt": null, "apiKeySource": "ANTHROPIC_API_KEY"}'` +
		"\n  exit 0\nfi\necho '" + version + " (Claude Code)'\n"
	require.NoError(t, os.WriteFile(p, []byte(script), 0o755))
	return p
}

// daemon is a configured untether installation for one test: a fake
// Telegram, a config file, a state dir and a HOME.
type daemon struct {
	t       *testing.T
	tg      *telegramtest.Server
	cfg     daemonConfig
	cfgPath string
	home    string
	notify  *notifySocket
	env     []string
}

const (
	alice = telegramtest.UserID(1001)
	bob   = telegramtest.UserID(1002)
)

// newDaemon prepares (but does not start) an installation whose Claude is
// the stub; tests that run turns replace Binary, Workdir, Home and Env.
func newDaemon(t *testing.T) *daemon {
	t.Helper()
	root := t.TempDir()
	d := &daemon{t: t, tg: telegramtest.New(t, telegramtest.WithBotIdentity("Untether", "untether_bot")),
		home: filepath.Join(root, "home"), cfgPath: filepath.Join(root, "untether.toml")}
	workdir := filepath.Join(root, "project")
	for _, dir := range []string{d.home, workdir} {
		require.NoError(t, os.MkdirAll(dir, 0o700))
	}
	d.cfg = daemonConfig{
		Token: d.tg.Token(), APIURL: d.tg.URL(), Users: []int64{int64(alice)},
		Binary: stubClaude(t, root, runner.TestedVersion), Workdir: workdir,
		StateDir: filepath.Join(root, "state"),
	}
	d.tg.AddChat(telegramtest.Chat{ID: telegramtest.ChatID(alice), Type: telegramtest.Private, FirstName: "Alice", Username: "alice"})
	d.tg.AddChat(telegramtest.Chat{ID: telegramtest.ChatID(bob), Type: telegramtest.Private, FirstName: "Bob", Username: "bob"})
	return d
}

// withNotify gives the daemon a fake NOTIFY_SOCKET and a 2 s watchdog, so
// STATUS= and WATCHDOG=1 arrive every second.
func (d *daemon) withNotify() *notifySocket {
	d.notify = newNotifySocket(d.t)
	d.env = append(d.env, "NOTIFY_SOCKET="+d.notify.path, "WATCHDOG_USEC=2000000")
	return d.notify
}

func (d *daemon) writeConfig() {
	d.t.Helper()
	require.NoError(d.t, os.WriteFile(d.cfgPath, []byte(d.cfg.toml()), 0o600))
}

// start writes the config and runs `untether run --config …`.
func (d *daemon) start() *process {
	d.t.Helper()
	d.writeConfig()
	return startProcess(d.t, baseEnv(d.home, d.env...), "run", "--config", d.cfgPath)
}

// waitReady waits for the daemon to serve updates.
func (d *daemon) waitReady(p *process) {
	d.t.Helper()
	p.waitLog("that it serves Telegram updates", msgIs("serving Telegram updates"))
}

// say sends a user message to the bot.
func (d *daemon) say(user telegramtest.UserID, text string) telegramtest.Message {
	return d.tg.UserSends(telegramtest.ChatID(user), telegramtest.User{ID: user, FirstName: "U"}, text)
}

// waitBot waits for a bot message in chat satisfying pred; a failure dumps
// the chat.
func (d *daemon) waitBot(chat telegramtest.ChatID, what string, pred func(telegramtest.Message) bool) telegramtest.Message {
	d.t.Helper()
	return d.tg.WaitForBotMessage(wait, chat, what, pred)
}

func dumpChat(sn *telegramtest.Snapshot, chat telegramtest.ChatID) string { return sn.Dump(chat) }

// isFinal reports whether m is a final answer to msg: a reply with the
// footer's clock and no buttons.
func isFinal(m telegramtest.Message, to telegramtest.MessageID) bool {
	return m.ReplyTo == to && answerKeyboard(m) && strings.Contains(m.Text, "⏱")
}

// answerKeyboard reports whether m has no buttons but the one an answer
// has (💻 Terminal, which hands the session to a terminal and works after
// a restart), which a progress message never has.
func answerKeyboard(m telegramtest.Message) bool {
	for _, row := range m.Keyboard {
		for _, b := range row {
			if b.Text != "💻 Terminal" {
				return false
			}
		}
	}
	return true
}

func buttonData(m telegramtest.Message, label string) string { return m.ButtonData(label) }

// procInfo is a process found under /proc.
type procInfo struct {
	pid      int
	exe, cwd string
}

// processesIn lists the live processes whose working directory is dir: the
// CLI and anything its tools started. Zombies are dead and not listed.
func processesIn(t *testing.T, dir string) []procInfo {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []procInfo
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil || cwd != dir {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			// The state follows the parenthesised command name.
			if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
				continue
			}
		}
		exe, _ := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		out = append(out, procInfo{pid: pid, exe: exe, cwd: cwd})
	}
	return out
}

// killProcessesIn is the cleanup's last resort after a failure.
func killProcessesIn(t *testing.T, dir string) {
	for _, p := range processesIn(t, dir) {
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// golden compares got with testdata/<name> at the repository root, or
// rewrites the file when the tests run with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("..", "..", "testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file missing; run go test ./cmd/untether -run %s -update", t.Name())
	require.Equal(t, string(want), got, "output differs from %s (rerun with -update if the change is intended)", path)
}
