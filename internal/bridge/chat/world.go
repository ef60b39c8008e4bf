package chat

import (
	"errors"
	"fmt"
	"sync"

	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// The world changes under a long-running daemon: npm updates the CLI in
// place or removes it, someone deletes or moves the project directory. The
// runner looks again at every spawn (runner.MissingError); the bridge
// explains what is missing, keeps running, and never recreates a
// directory: one that reappeared empty would hide the mistake.

// missingText explains a spawn that found the CLI or the workdir gone, or
// reports false for any other error.
func missingText(err error) (string, bool) {
	var me *runner.MissingError
	if !errors.As(err, &me) {
		return "", false
	}
	path := render.EscapeHTML(me.Path)
	switch {
	case errors.Is(me.Kind, runner.ErrBinaryMissing):
		return fmt.Sprintf("⚠️ Claude could not start: the Claude CLI is not at <code>%s</code> (uninstalled, moved, or being updated?). "+
			"Your message was not sent to Claude. untether keeps running and looks for the CLI again at every message: send it again once the CLI is back.", path), true
	case errors.Is(me.Kind, runner.ErrWorkdirMissing):
		return fmt.Sprintf("⚠️ Claude could not start: the project directory <code>%s</code> does not exist (moved or deleted?). "+
			"Your message was not sent to Claude, and untether does not create the directory again by itself: restore it, then send your message again.", path), true
	}
	return "", false
}

// cliVersions notices the CLI changing version under the daemon (an
// update in place): the version each turn reports is checked against the
// tested range once per version, like the start-up check.
type cliVersions struct {
	mu   sync.Mutex
	seen map[string]bool
	last string
}

// noteCLIVersion logs a version seen for the first time if it differs from
// the one before, and warns if it is outside the tested range.
func (b *Engine) noteCLIVersion(v string) {
	if v == "" {
		return
	}
	w := &b.versions
	w.mu.Lock()
	if w.seen[v] {
		w.last = v
		w.mu.Unlock()
		return
	}
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	w.seen[v] = true
	prev := w.last
	w.last = v
	w.mu.Unlock()
	if prev != "" {
		b.log.Info().Str("from", prev).Str("to", v).Msg("the Claude CLI changed version; new processes run the new one, running ones finish on theirs")
	}
	r := runner.TestedRange
	if fit, err := r.Fit(v); err != nil || fit != runner.VersionInRange {
		b.log.Warn().Str("claude_version", v).Str("tested", r.String()).AnErr("parse_error", err).
			Msg("the Claude CLI runs a version untether is not tested with; frames it does not know are logged and ignored")
	}
}
