package transcript

import "time"

// about is what a session's entries say about it: the time span they
// cover, and the last working directory, branch, CLI version and
// entrypoint recorded (the CLI writes them on most entries).
type about struct {
	first, last                               time.Time
	session, cwd, branch, version, entrypoint string
}

func (a *about) note(e *entry) {
	if t := e.time(); !t.IsZero() {
		if a.first.IsZero() {
			a.first = t
		}
		a.last = t
	}
	if a.session == "" {
		a.session = e.SessionID
	}
	for _, f := range []struct {
		to *string
		v  string
	}{
		{&a.cwd, e.CWD}, {&a.branch, e.GitBranch}, {&a.version, e.Version}, {&a.entrypoint, e.Entrypoint},
	} {
		if f.v != "" {
			*f.to = f.v
		}
	}
}
