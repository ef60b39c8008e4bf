package sshtest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// envRequire is claudetest.EnvRequire; the two helpers skip and fail alike.
const envRequire = "UNTETHER_REQUIRE_REAL_CLAUDE"

// sshdPaths are where distributions put sshd (it is not on a user's PATH).
var sshdPaths = []string{"/usr/sbin/sshd", "/usr/local/sbin/sshd", "/sbin/sshd"}

// Server is a running sshd.
type Server struct {
	// Host is the destination for ssh: <current user>@127.0.0.1.
	Host string
	Port int
	// Options are the ssh arguments that reach it with the test's key and
	// nothing from the user's own ssh configuration.
	Options []string
	// Dir holds the keys, the config and known_hosts.
	Dir string

	cmd  *exec.Cmd
	logs *lockedLog
}

type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(s + "\n")
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// PID is the listening sshd's; the commands it runs descend from it.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Logs is what sshd wrote so far.
func (s *Server) Logs() string { return s.logs.String() }

// Option changes the server Start runs.
type Option func(*options)

type options struct{ fishLike bool }

// FishLike makes the server read each command line the way a login shell
// that is fish would (see the fishlike program), not the way the current
// user's login shell does.
func FishLike() Option { return func(o *options) { o.fishLike = true } }

// Start starts sshd for t and stops it when t ends.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	sshd := find(sshdPaths)
	keygen, kerr := exec.LookPath("ssh-keygen")
	if sshd == "" || kerr != nil {
		msg := "sshd or ssh-keygen is not installed (apt-get install openssh-server openssh-client)"
		if os.Getenv(envRequire) == "1" {
			t.Fatalf("sshtest: %s, and %s=1 forbids skipping", msg, envRequire)
		}
		t.Skipf("sshtest: %s", msg)
	}
	me, err := user.Current()
	if err != nil {
		t.Fatalf("sshtest: current user: %v", err)
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatalf("sshtest: %v", err)
	}
	for _, k := range []string{"host_key", "client_key"} {
		if out, err := exec.Command(keygen, "-q", "-t", "ed25519", "-N", "", "-C", "untether-test", "-f", filepath.Join(dir, k)).CombinedOutput(); err != nil {
			t.Fatalf("sshtest: ssh-keygen %s: %v: %s", k, err, out)
		}
	}
	clientPub := readFile(t, filepath.Join(dir, "client_key.pub"))
	writeFile(t, filepath.Join(dir, "authorized_keys"), clientPub)
	if os.Geteuid() == 0 {
		// sshd refuses to start as root without its privilege separation
		// directory, which the service's unit would have made.
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			t.Fatalf("sshtest: %v", err)
		}
	}

	var extra []string
	if o.fishLike {
		// sshd runs it through the login shell, with the client's command
		// in SSH_ORIGINAL_COMMAND: a constant line with a path of ours.
		extra = append(extra, "ForceCommand exec "+buildFishLike(t, dir))
	}
	var srv *Server
	for attempt := 0; attempt < 5 && srv == nil; attempt++ {
		port := freePort(t)
		srv = start(t, sshd, dir, me.Username, port, extra)
	}
	if srv == nil {
		t.Fatalf("sshtest: sshd did not start")
	}
	hostPub := strings.TrimSpace(readFile(t, filepath.Join(dir, "host_key.pub")))
	known := filepath.Join(dir, "known_hosts")
	writeFile(t, known, fmt.Sprintf("[127.0.0.1]:%d %s\n", srv.Port, hostPub))
	srv.Host = me.Username + "@127.0.0.1"
	srv.Options = []string{"-F", "/dev/null", "-p", strconv.Itoa(srv.Port), "-i", filepath.Join(dir, "client_key"),
		"-o", "IdentitiesOnly=yes", "-o", "IdentityAgent=none", "-o", "UserKnownHostsFile=" + known,
		"-o", "GlobalKnownHostsFile=/dev/null", "-o", "StrictHostKeyChecking=yes", "-o", "LogLevel=ERROR"}
	return srv
}

// start runs sshd on port and waits until it listens; nil if the port was
// taken meanwhile.
func start(t testing.TB, sshd, dir, username string, port int, extra []string) *Server {
	t.Helper()
	conf := filepath.Join(dir, "sshd_config")
	writeFile(t, conf, strings.Join(append([]string{
		"ListenAddress 127.0.0.1",
		"Port " + strconv.Itoa(port),
		"HostKey " + filepath.Join(dir, "host_key"),
		"AuthorizedKeysFile " + filepath.Join(dir, "authorized_keys"),
		"PidFile " + filepath.Join(dir, "sshd.pid"),
		"AllowUsers " + username,
		"PermitRootLogin prohibit-password",
		"PubkeyAuthentication yes",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"UsePAM no",
		"StrictModes no",
		"UseDNS no",
		"PrintMotd no",
		"PrintLastLog no",
		"X11Forwarding no",
		"AllowTcpForwarding no",
		"LogLevel INFO",
	}, append(extra, "")...), "\n"))
	cmd := exec.Command(sshd, "-D", "-e", "-f", conf)
	// Its own group, so the cleanup reaches the per-connection children.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatalf("sshtest: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("sshtest: start %s: %v", sshd, err)
	}
	logs := &lockedLog{}
	listening := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			logs.add(line)
			if !sent && strings.Contains(line, "Server listening on 127.0.0.1 port "+strconv.Itoa(port)) {
				listening <- true
				sent = true
			}
		}
		if !sent {
			listening <- false
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case ok := <-listening:
		if !ok {
			<-exited
			if strings.Contains(logs.String(), "Address already in use") {
				return nil
			}
			t.Fatalf("sshtest: sshd exited before listening:\n%s", logs.String())
		}
	case <-timer.C:
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		t.Fatalf("sshtest: sshd did not listen within 30s:\n%s", logs.String())
	}
	srv := &Server{Port: port, Dir: dir, cmd: cmd, logs: logs}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if t.Failed() {
			t.Logf("sshd log:\n%s", logs.String())
		}
	})
	return srv
}

// Run runs command on the server through ssh and returns its output.
func (s *Server) Run(ctx context.Context, command string) (string, error) {
	args := append([]string{"-T", "-o", "BatchMode=yes"}, s.Options...)
	args = append(args, s.Host, "--", command)
	out, err := exec.CommandContext(ctx, "ssh", args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ssh %s: %w: %s", command, err, out)
	}
	return string(out), nil
}

func find(paths []string) string {
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	if p, err := exec.LookPath("sshd"); err == nil {
		return p
	}
	return ""
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("sshtest: find a free port: %v", err)
	}
	defer l.Close()
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		t.Fatalf("sshtest: not a TCP address: %v", l.Addr())
	}
	return addr.Port
}

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("sshtest: %v", err)
	}
	return string(b)
}

func writeFile(t testing.TB, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatalf("sshtest: %v", err)
	}
}

// fishLikePackage is the fishlike program's import path.
const fishLikePackage = "github.com/untether/untether/internal/runner/sshtest/fishlike"

// buildFishLike builds the fishlike program into dir (the go command's
// build cache makes this quick after the first time) and returns its path.
func buildFishLike(t testing.TB, dir string) string {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		if goBin, err = exec.LookPath("go"); err != nil {
			t.Fatalf("sshtest: FishLike needs the go command to build fishlike: %v", err)
		}
	}
	out := filepath.Join(dir, "fishlike")
	if b, err := exec.Command(goBin, "build", "-o", out, fishLikePackage).CombinedOutput(); err != nil {
		t.Fatalf("sshtest: build %s: %v: %s", fishLikePackage, err, b)
	}
	return out
}
