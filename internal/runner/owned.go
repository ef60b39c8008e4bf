package runner

import "os/exec"

// StartOwned starts a child that is not a CLI session but, like one, runs
// in a process group or session of its own (a login under a
// pseudo-terminal, internal/login) and will be waited for with WaitOwned:
// from the spawn thread, so a SysProcAttr.Pdeathsig fires only when the
// daemon dies (spawn_linux.go), and registered, so the orphan reaper never
// steals its exit status from the Wait (reap_linux.go). A child left in the
// daemon's process group needs neither.
func StartOwned(cmd *exec.Cmd) error { return startOwned(cmd) }

// WaitOwned waits for a child started by StartOwned.
func WaitOwned(cmd *exec.Cmd) error { return waitOwned(cmd) }
