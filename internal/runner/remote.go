package runner

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// A remote session runs the CLI on another machine through the system
// OpenSSH client: authentication, multiplexing (ControlMaster) and
// reconnection are ssh's, the stream-json goes over ssh's stdin and stdout
// unchanged (-T: no terminal to mangle it), and the process the runner
// supervises is the local ssh. Its command line is a constant,
//
//	ssh -T -o BatchMode=yes [options] host -- sh -c '<wrapper>' untether
//
// with nothing of a chat's on it: the remote login shell, whatever it is
// (sh, bash, zsh, fish, csh), parses that command line, and no quoting is
// safe in all of them (fish reads \' inside single quotes as a quote). So
// the wrapper is one line without ' \ ! or a newline, which every one of
// them reads as the same single-quoted word, and everything else is sent
// as the first lines on stdin (remoteInput): the environment, then the
// project directory, the CLI and its arguments, which the wrapper reads
// into its positional parameters without ever evaluating them. Nothing of
// it is on a command line that every user of the remote machine could
// read in ps (the CLI's own argv is, over there, as it is here).
//
// ssh does not stop a remote command when the channel closes (without a
// terminal there is no hangup), so the wrapper ties the CLI to the channel:
// it relays the rest of its stdin to the CLI, and when that ends (the
// runner closed it, or the connection is gone) the CLI gets end-of-input,
// then SIGTERM and SIGKILL if it does not exit by itself within remoteGrace
// each.

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

// Exit codes of the remote scripts, to tell their failures apart.
const (
	remoteBadInput = 95 // the preamble on stdin was cut short or malformed
	remoteNoDir    = 96 // the directory cannot be entered (or, for a session, no pipe made)
	remoteNoCLI    = 97 // the check's `<binary> --version` failed
)

// remotePreamble is the start of every remote script: it reads remoteInput
// from stdin. The environment comes as KEY=VALUE lines ended by an empty
// line and is exported; then the number of words, and the words one a
// line, each decoded by printf %b (remoteWords escapes only \ and newline,
// as \0ddd; the "." keeps a trailing newline from $(...)) into the
// positional parameters. The first word is the directory, with a leading
// ~/ as the login's home (not a HOME the environment sets).
var remotePreamble = `home=$HOME; while IFS= read -r kv && [ -n "$kv" ]; do export "$kv" || exit ` + strconv.Itoa(remoteBadInput) + `; done; ` +
	`read -r n && [ "$n" -ge 1 ] 2>/dev/null || exit ` + strconv.Itoa(remoteBadInput) + `; set --; ` +
	`while [ "$#" -lt "$n" ]; do IFS= read -r w || exit ` + strconv.Itoa(remoteBadInput) + `; w=$(printf %b. "$w"); set -- "$@" "${w%.}"; done; ` +
	`dir=$1; shift; case $dir in "~/"*) dir=$home/${dir#??};; esac; `

// remoteWrapper runs a session's CLI: $@ after the preamble is the CLI and
// its arguments.
var remoteWrapper = remotePreamble +
	`cd "$dir" 2>/dev/null || { echo "untether: cannot enter the directory $dir on $(uname -n)" >&2; exit ` + strconv.Itoa(remoteNoDir) + `; }; ` +
	`d=$(mktemp -d "${TMPDIR:-/tmp}/untether.XXXXXX") && mkfifo "$d/in" || { echo "untether: cannot make a pipe in ${TMPDIR:-/tmp} on $(uname -n)" >&2; exit ` + strconv.Itoa(remoteNoDir) + `; }; ` +
	`exec 3<&0 </dev/null; ` +
	`"$@" <"$d/in" 3<&- & cli=$!; ` +
	`( exec 4>"$d/in"; rm -rf "$d"; cat <&3 >&4; exec 4>&- 3<&-; ` +
	`sleep ` + remoteGrace + `; kill -TERM "$cli"; sleep ` + remoteGrace + `; kill -KILL "$cli" ) >/dev/null 2>&1 & relay=$!; ` +
	`exec 3<&-; wait "$cli"; st=$?; kill "$relay" 2>/dev/null; exit "$st"`

// remoteCheckScript is `untether check --online`'s: $1 after the preamble
// is the CLI, asked for its version in the directory.
var remoteCheckScript = remotePreamble +
	`cd "$dir" 2>/dev/null || exit ` + strconv.Itoa(remoteNoDir) + `; ` +
	`"$1" --version 2>&1 || exit ` + strconv.Itoa(remoteNoCLI)

// remoteCommand is the command line ssh sends to run script: a constant.
func remoteCommand(script string) string { return "sh -c '" + script + "' untether" }

// remoteWordEscapes are what remoteWords escapes, as printf %b reads it
// back: always three octal digits after \0, so a digit that follows is
// never taken into the escape.
var remoteWordEscapes = strings.NewReplacer(`\`, `\0134`, "\n", `\0012`)

// remoteWords is the words part of remoteInput.
func remoteWords(words []string) ([]byte, error) {
	var b strings.Builder
	b.WriteString(strconv.Itoa(len(words)) + "\n")
	for _, w := range words {
		if strings.ContainsRune(w, 0) {
			return nil, fmt.Errorf("%w: an argument of a remote CLI cannot hold a NUL byte: %.80q", ErrInvalidInput, w)
		}
		b.WriteString(remoteWordEscapes.Replace(w) + "\n")
	}
	return []byte(b.String()), nil
}

// remoteInput is what a remote script reads first on its stdin: env (as
// remoteEnv makes it), then dir and the other words.
func remoteInput(env []byte, dir string, words ...string) ([]byte, error) {
	w, err := remoteWords(append([]string{dir}, words...))
	if err != nil {
		return nil, err
	}
	return append(slices.Clip(env), w...), nil
}

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

// remoteEnv is the environment part of remoteInput: the configured
// environment and the daemon's locale, as sorted KEY=VALUE lines and an
// empty line.
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

// remoteLaunch builds the ssh command for a remote session's CLI: the
// constant command line, and the directory, the CLI, its arguments and its
// environment on stdin.
func (s *Session) remoteLaunch(sshPath string, cliArgs []string) (launch, error) {
	r := s.cfg.Remote
	env, err := remoteEnv(s.cfg.InheritEnv, s.cfg.Env)
	if err != nil {
		return launch{}, err
	}
	in, err := remoteInput(env, s.cfg.Workdir, append([]string{s.cfg.Binary}, cliArgs...)...)
	if err != nil {
		return launch{}, err
	}
	return launch{bin: sshPath, args: r.SSHArgs(remoteCommand(remoteWrapper)), env: sshEnv(s.cfg.InheritEnv), stdin: in}, nil
}
