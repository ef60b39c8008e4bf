package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// ErrRemoteUnreachable means ssh could not log in to a remote project's
// host (ssh exits 255: no route, refused, no key accepted, unknown host).
var ErrRemoteUnreachable = errors.New("ssh could not reach the host")

// RemoteVersion checks a remote project the way `untether check --online`
// reports it: ssh reaches r.Host (ErrRemoteUnreachable), dir exists there
// (a *MissingError with ErrWorkdirMissing), and `binary --version` runs
// there (ErrBinaryMissing), returning the CLI's version.
func RemoteVersion(ctx context.Context, r Remote, dir, binary string) (string, error) {
	ssh, err := exec.LookPath(r.sshBinary())
	if err != nil {
		return "", &MissingError{Kind: ErrBinaryMissing, Path: r.sshBinary(), Err: err}
	}
	// Like a session's (remote.go): a constant command line, the
	// directory and the binary on stdin, after an empty environment.
	in, err := remoteInput([]byte("\n"), dir, binary)
	if err != nil {
		return "", err
	}
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, ssh, r.SSHArgs(remoteCommand(remoteCheckScript))...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), &out, &errOut
	// Through startOwned, so the orphan reaper never reaps it under Wait.
	if err := startOwned(cmd); err != nil {
		return "", fmt.Errorf("run ssh %s: %w", r.Host, err)
	}
	err = waitOwned(cmd)
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == 255:
		return "", fmt.Errorf("%w %s: %s", ErrRemoteUnreachable, r.Host, strings.TrimSpace(errOut.String()))
	case errors.As(err, &exit) && exit.ExitCode() == remoteNoDir:
		return "", &MissingError{Kind: ErrWorkdirMissing, Path: r.Host + ":" + dir, Err: errors.New("no such directory there")}
	case errors.As(err, &exit) && exit.ExitCode() == remoteNoCLI:
		return "", &MissingError{Kind: ErrBinaryMissing, Path: r.Host + ":" + binary, Err: errors.New(strings.TrimSpace(out.String()))}
	case err != nil:
		return "", fmt.Errorf("ssh %s: %w: %s", r.Host, err, strings.TrimSpace(errOut.String()))
	}
	v := versionRe.FindString(out.String())
	if v == "" {
		return "", fmt.Errorf("%s on %s --version: no version in %q", binary, r.Host, out.String())
	}
	return v, nil
}
