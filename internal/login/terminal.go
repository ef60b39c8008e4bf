package login

import (
	"fmt"
	"os"
	"syscall"

	"github.com/creack/pty"

	"github.com/untether/untether/internal/runner"
)

// startTerminal starts the program on a new pseudo-terminal, as the leader
// of a session of its own whose controlling terminal it is (so a kill of
// its process group reaches everything it started there).
func (s *Session) startTerminal() error {
	term, tty, err := pty.Open()
	if err != nil {
		return fmt.Errorf("open a pseudo-terminal: %w", err)
	}
	defer tty.Close() // the child has its own copies
	if err := pty.Setsize(term, &pty.Winsize{Cols: termCols, Rows: termRows}); err != nil {
		term.Close()
		return fmt.Errorf("size the pseudo-terminal: %w", err)
	}
	s.cmd.Stdin, s.cmd.Stdout, s.cmd.Stderr = tty, tty, tty
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Pdeathsig: syscall.SIGKILL}
	if err := runner.StartOwned(s.cmd); err != nil {
		term.Close()
		return err
	}
	s.out, s.in = term, term
	return nil
}

// startPipes starts the program with its stdin and a pipe that carries
// both its stdout and its stderr, in a process group of its own.
func (s *Session) startPipes() error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("make the output pipe: %w", err)
	}
	defer w.Close() // the child has its own copy
	stdin, err := s.cmd.StdinPipe()
	if err != nil {
		r.Close()
		return fmt.Errorf("make the input pipe: %w", err)
	}
	s.cmd.Stdout, s.cmd.Stderr = w, w
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := runner.StartOwned(s.cmd); err != nil {
		r.Close()
		return err
	}
	s.out, s.in, s.closeIn, s.enter = r, stdin, stdin.Close, "\n"
	return nil
}
