package main

import (
	"context"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/runner"
)

// claudeVersionFinding judges the installed CLI's version (from `claude
// --version`) against the range the real-CLI suite passed on, for `untether
// check` and the start-up log. ok is false outside the range.
func claudeVersionFinding(v string) (ok bool, msg string) {
	r := runner.TestedRange
	fit, err := r.Fit(v)
	switch {
	case err != nil:
		return false, fmt.Sprintf("claude reports version %q, which untether cannot compare with the versions it is tested with (%s)", v, r)
	case fit == runner.VersionOlder:
		return false, fmt.Sprintf("claude %s is older than the versions untether is tested with (%s); upgrade it (%s is the newest tested)", v, r, r.Max)
	case fit == runner.VersionNewer:
		return false, fmt.Sprintf("claude %s is newer than the versions untether is tested with (%s); frames untether does not know are logged and ignored", v, r)
	}
	return true, fmt.Sprintf("claude %s (untether is tested with %s)", v, r)
}

// warnUntestedClaude logs a start-up warning when the CLI's version is
// outside the tested range or cannot be read. The daemon starts anyway: an
// untested version usually works, and a missing binary fails each turn
// with its own message.
func warnUntestedClaude(log *zerolog.Logger, v string, err error) {
	if err != nil {
		log.Warn().Err(err).Msg("cannot tell the claude version; turns will fail if the binary cannot run")
		return
	}
	if ok, msg := claudeVersionFinding(v); !ok {
		log.Warn().Str("claude_version", v).Str("tested", runner.TestedRange.String()).Msg(msg)
	}
}

// probeClaudeVersion runs `claude --version` in the background, logs what
// it finds (a warning when it is untested, then "claude version") and hands
// it to found.
// Nothing waits for it: the version is only reported, and the probe takes
// 10–50 ms, more than the rest of the start-up to the first poll. The
// returned function stops the probe if it still runs and waits for it.
func probeClaudeVersion(log *zerolog.Logger, binary string, found func(version string)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		v, err := runner.CLIVersion(ctx, binary)
		if ctx.Err() != nil {
			return // the daemon stopped before the probe ended: nothing was learnt about the binary
		}
		warnUntestedClaude(log, v, err)
		found(v)
		// Last, so that a reader who sees it has seen the warning too.
		log.Info().Str("claude_version", v).AnErr("claude_version_error", err).Msg("claude version")
	}()
	return func() {
		cancel()
		<-done
	}
}
