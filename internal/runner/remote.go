package runner

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// A remote session runs the CLI on another machine through the system
// OpenSSH client: authentication, multiplexing (ControlMaster) and
// reconnection are ssh's, the stream-json goes over ssh's stdin and stdout
// unchanged (-T: no terminal to mangle it), and the process the runner
// supervises is the local ssh. Its command line is
//
//	ssh -T -o BatchMode=yes [options] host -- sh -c '<wrapper>' untether <dir> <claude> <args>
//
// ssh does not stop a remote command when the channel closes (without a
// terminal there is no hangup), so the wrapper ties the CLI to the channel:
// it relays its own stdin to the CLI, and when that ends (the runner closed
// it, or the connection is gone) the CLI gets end-of-input, then SIGTERM
// and SIGKILL if it does not exit by itself within remoteGrace each. The
// environment is sent as the first lines on stdin, never on a command line
// that every user of the remote machine could read in ps.

// Remote says where and how a session's CLI runs on another machine.
type Remote struct {
	// Host is ssh's destination, [user@]host.
	Host string
	// SSHOptions are extra arguments for ssh, before the destination.
	SSHOptions []string
	// SSH is the ssh client: a name on PATH or a path; "" is "ssh".
	SSH string
}

// remoteGrace is how long the wrapper lets the CLI finish by itself after
// its input ended, and then after SIGTERM, before the next step.
const remoteGrace = "3"

// remoteWrapper is the POSIX sh script run on the remote host. $1 is the
// project directory (a leading ~/ is the login's home), the rest the CLI's
// argv. The environment comes first on stdin as KEY=VALUE lines, ended by
// an empty line.
const remoteWrapper = `dir=$1; shift
case $dir in "~/"*) dir=$HOME/${dir#??};; esac
cd "$dir" 2>/dev/null || { echo "untether: cannot enter the directory $dir on $(uname -n)" >&2; exit 96; }
while IFS= read -r kv && [ -n "$kv" ]; do export "$kv" || exit 96; done
d=$(mktemp -d "${TMPDIR:-/tmp}/untether.XXXXXX") && mkfifo "$d/in" || { echo "untether: cannot make a pipe in ${TMPDIR:-/tmp} on $(uname -n)" >&2; exit 96; }
exec 3<&0 </dev/null
"$@" <"$d/in" 3<&- &
cli=$!
(
  exec 4>"$d/in"
  rm -rf "$d"
  cat <&3 >&4
  exec 4>&- 3<&-
  sleep ` + remoteGrace + `; kill -TERM "$cli"
  sleep ` + remoteGrace + `; kill -KILL "$cli"
) >/dev/null 2>&1 &
relay=$!
exec 3<&-
wait "$cli"; st=$?
kill "$relay" 2>/dev/null
exit "$st"`

// remoteEnvName is a variable the wrapper may export.
var remoteEnvName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// remoteInheritable are the daemon's variables a remote CLI also gets: the
// locale. PATH, HOME, USER, SHELL and the rest describe this machine; the
// remote login has its own.
func remoteInheritable(name string) bool {
	return name == "LANG" || name == "TZ" || strings.HasPrefix(name, "LC_")
}

// sshEnvAllowed are the daemon's variables the local ssh client needs
// besides the CLI's allow-list: the agent holding its keys.
var sshEnvAllowed = []string{"SSH_AUTH_SOCK"}

// SSHArgs is ssh's argument list for running command (one shell command
// line) on r.Host: -T and BatchMode first, so a password prompt can never
// block a session, then the configured options.
func (r Remote) SSHArgs(command string) []string {
	args := append([]string{"-T", "-o", "BatchMode=yes"}, r.SSHOptions...)
	return append(args, r.Host, "--", command)
}

// sshBinary is the ssh client to run.
func (r Remote) sshBinary() string {
	if r.SSH == "" {
		return "ssh"
	}
	return r.SSH
}

// remoteCommand is the shell command line that runs binary with args in
// dir on the remote host, through the wrapper.
func remoteCommand(dir, binary string, args []string) string {
	words := append([]string{"sh", "-c", remoteWrapper, "untether", dir, binary}, args...)
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = ShellQuote(w)
	}
	return strings.Join(quoted, " ")
}

// ShellQuote quotes s for a POSIX shell (and csh and fish): single quotes,
// with each ' written as '\”.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// remoteEnv is the preamble the wrapper reads: the configured environment
// and the daemon's locale, as sorted KEY=VALUE lines and an empty line.
func remoteEnv(inherited []string, extra map[string]string) ([]byte, error) {
	vars := map[string]string{}
	for _, kv := range inherited {
		if k, v, ok := strings.Cut(kv, "="); ok && remoteInheritable(k) {
			vars[k] = v
		}
	}
	for k, v := range extra {
		vars[k] = v
	}
	keys := make([]string, 0, len(vars))
	for k, v := range vars {
		if !remoteEnvName.MatchString(k) {
			return nil, fmt.Errorf("%w: environment variable name %q", ErrInvalidInput, k)
		}
		if strings.ContainsAny(v, "\n\x00") {
			return nil, fmt.Errorf("%w: environment variable %s: a remote CLI's variables cannot hold a newline", ErrInvalidInput, k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + vars[k] + "\n")
	}
	b.WriteString("\n")
	return []byte(b.String()), nil
}

// sshEnv is the local ssh client's environment: the CLI's allow-list of
// the daemon's variables (HOME finds ~/.ssh) and the agent socket. The
// configured env is for the CLI, and goes over the wire instead.
func sshEnv(inherited []string) []string {
	env := BuildEnv(inherited, nil)
	for _, kv := range inherited {
		if k, _, ok := strings.Cut(kv, "="); ok && slices.Contains(sshEnvAllowed, k) {
			env = append(env, kv)
		}
	}
	sort.Strings(env)
	return env
}

// launch is how one CLI process is started: locally, or through ssh.
type launch struct {
	bin  string
	args []string
	env  []string
	dir  string
	// stdin is written to the process first (a remote CLI's environment).
	stdin []byte
	// tag is the CLI tree's tag; "" for ssh, whose connection-sharing
	// master (ControlPersist) must outlive the session that started it.
	tag string
}

// remoteLaunch builds the ssh command for a remote session's CLI.
func (s *Session) remoteLaunch(sshPath string, cliArgs []string) (launch, error) {
	r := s.cfg.Remote
	pre, err := remoteEnv(s.cfg.InheritEnv, s.cfg.Env)
	if err != nil {
		return launch{}, err
	}
	return launch{bin: sshPath, args: r.SSHArgs(remoteCommand(s.cfg.Workdir, s.cfg.Binary, cliArgs)),
		env: sshEnv(s.cfg.InheritEnv), stdin: pre}, nil
}
