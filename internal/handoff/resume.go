package handoff

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/untether/untether/internal/runner"
)

// Errors Line returns.
var (
	// ErrUnshowable means a value cannot be shown truly in a message (not
	// UTF-8, control or bidirectional characters), so no line is made.
	ErrUnshowable = errors.New("cannot be shown as it is")
	// ErrInvalid means the session, directory, binary or host is not one
	// untether would run a CLI with.
	ErrInvalid = errors.New("invalid resume line input")
)

// DefaultBinary is the CLI a line names when none is configured.
const DefaultBinary = "claude"

// Resume is what a resume line is made of: the session and how untether
// runs its CLI.
type Resume struct {
	// ID is the session to resume.
	ID runner.SessionID
	// Dir is the CLI's working directory: absolute on this machine; on a
	// Remote host absolute or ~/… (the login's home), as the config allows.
	Dir string
	// Binary is the CLI as configured ([claude] binary or the project's):
	// a command name, written as it is and found on the PATH of whoever
	// runs the line, or an absolute path, written as it is. "" is
	// DefaultBinary. On this machine a relative path is refused, since
	// the line runs it from Dir, not from where the daemon resolved it.
	Binary string
	// Home is the HOME untether gives the CLI (project or claude.home, or
	// an env table's HOME), under which the CLI keeps its sessions; ""
	// when it sets none. On this machine the line sets it unless it is
	// the home of the account that runs the line; on a Remote host
	// whenever it is set.
	Home string
	// Remote is the project's host and ssh settings; nil for this machine.
	Remote *runner.Remote
	// Daemon is the account untether runs as and Owner the owner of Dir
	// (LocalAccounts); SwitchTo decides from them whether the line becomes
	// Daemon first. Both are ignored for a Remote project, which ssh logs
	// in to as its Host says.
	Daemon, Owner Account
}

// Line is the shell command a person pastes into a terminal to continue
// the session where untether left it (see the package doc for its forms
// and quoting). It errs, making no line, when the input is not one untether
// runs a CLI with (ErrInvalid) or cannot be shown truly (ErrUnshowable).
func (r Resume) Line() (string, error) {
	if err := r.check(); err != nil {
		return "", err
	}
	bin := r.Binary
	if bin == "" {
		bin = DefaultBinary
	}
	var cli string
	// Here the line runs as the daemon's account: switched to (sudo -H
	// sets its home), or the person's own, which SwitchTo found the same.
	if r.Home != "" && (r.Remote != nil || r.Home != r.Daemon.Home) {
		cli = "env HOME=" + quoted(r.Home) + " "
	}
	cli += word(bin) + " --resume " + string(r.ID)
	if r.Remote != nil {
		return r.remoteLine(cli), nil
	}
	inner := "cd " + quoted(r.Dir) + " && " + cli
	if as := SwitchTo(r.Daemon, r.Owner); as != nil {
		// Not sudo -i: it runs the account's login shell, which for a
		// service account is nologin. -H makes HOME the account's home.
		return "sudo -u " + word(as.sudoUser()) + " -H sh -c " + command(inner), nil
	}
	return inner, nil
}

// remoteLine is ssh -t, the configured options, the host, and the command
// for the login shell over there.
func (r Resume) remoteLine(cli string) string {
	dir := quoted(r.Dir)
	if strings.HasPrefix(r.Dir, "~/") {
		dir = homeRelative(r.Dir)
	}
	ssh := r.Remote.SSH
	if ssh == "" {
		ssh = "ssh"
	}
	parts := []string{word(ssh), "-t"}
	for _, o := range r.Remote.SSHOptions {
		parts = append(parts, word(o))
	}
	parts = append(parts, word(r.Remote.Host), command("cd "+dir+" && "+cli))
	return strings.Join(parts, " ")
}

// check refuses what untether would not run a CLI with, and what a line
// could not show truly.
func (r Resume) check() error {
	if !r.ID.Valid() {
		return fmt.Errorf("%w: session id %.80q is not a UUID", ErrInvalid, r.ID)
	}
	switch {
	case r.Remote == nil && !filepath.IsAbs(r.Dir):
		return fmt.Errorf("%w: directory %.120q is not absolute", ErrInvalid, r.Dir)
	case r.Remote != nil && !strings.HasPrefix(r.Dir, "/") && !strings.HasPrefix(r.Dir, "~/"):
		return fmt.Errorf("%w: directory %.120q on %s is neither absolute nor ~/…", ErrInvalid, r.Dir, r.Remote.Host)
	case r.Remote == nil && strings.ContainsRune(r.Binary, '/') && !filepath.IsAbs(r.Binary):
		return fmt.Errorf("%w: binary %.120q is a relative path", ErrInvalid, r.Binary)
	case strings.HasPrefix(r.Binary, "-") || strings.ContainsRune(r.Binary, '='):
		// After env, either would be read as an option or a variable.
		return fmt.Errorf("%w: binary %.120q starts with - or holds =", ErrInvalid, r.Binary)
	case r.Remote != nil && (r.Remote.Host == "" || strings.HasPrefix(r.Remote.Host, "-")):
		return fmt.Errorf("%w: host %.80q", ErrInvalid, r.Remote.Host)
	}
	values := [][2]string{{"directory", r.Dir}, {"binary", r.Binary}, {"home", r.Home}}
	if r.Remote == nil {
		values = append(values, [2]string{"user", r.Daemon.Name})
	} else {
		values = append(values, [2]string{"host", r.Remote.Host}, [2]string{"ssh client", r.Remote.SSH})
		for _, o := range r.Remote.SSHOptions {
			values = append(values, [2]string{"ssh option", o})
		}
	}
	for _, v := range values {
		if err := checkShowable(v[0], v[1]); err != nil {
			return err
		}
	}
	return nil
}
