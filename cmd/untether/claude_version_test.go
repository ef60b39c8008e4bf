package main

import (
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner"
)

func TestClaudeVersionFinding(t *testing.T) {
	r := runner.TestedRange
	tests := []struct {
		version string
		ok      bool
		says    string
	}{
		{r.Min, true, "untether is tested with " + r.String()},
		{r.Max, true, "untether is tested with " + r.String()},
		{runner.TestedVersion, true, "claude " + runner.TestedVersion + " (untether is tested with"},
		{"1.0.0", false, "older than the versions untether is tested with (" + r.String() + "); upgrade it (" + r.Max + " is the newest tested)"},
		{"99.0.0", false, "newer than the versions untether is tested with (" + r.String() + ")"},
		{"banana", false, "cannot compare"},
	}
	for _, tc := range tests {
		ok, msg := claudeVersionFinding(tc.version)
		assert.Equal(t, tc.ok, ok, tc.version)
		assert.Contains(t, msg, tc.says, tc.version)
	}
}

// TestStartupWarnsAboutUntestedClaude: the daemon logs a warning at start
// when `claude --version` is outside the tested range, and none inside it;
// it starts either way.
func TestStartupWarnsAboutUntestedClaude(t *testing.T) {
	tests := []struct {
		name, version string
		warns         string // "" for no warning
	}{
		{"tested", runner.TestedVersion, ""},
		{"newest tested", runner.TestedRange.Max, ""},
		{"older", "1.0.0", "claude 1.0.0 is older than the versions untether is tested with"},
		{"newer", "99.1.2", "claude 99.1.2 is newer than the versions untether is tested with"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := newDaemon(t)
			d.cfg.Binary = stubClaude(t, t.TempDir(), tc.version)
			p := d.start()
			d.waitReady(p)
			// The probe runs beside the start-up; its warning, if any, is
			// logged before this line.
			p.waitLog("the version probe", msgIs("claude version"))
			var warnings []logLine
			for _, l := range p.logs() {
				if l.str("level") == "warn" && strings.Contains(l.str("message"), "claude") {
					warnings = append(warnings, l)
				}
			}
			if tc.warns == "" {
				assert.Empty(t, warnings, "no version warning inside the tested range")
			} else if assert.Len(t, warnings, 1) {
				assert.Contains(t, warnings[0].str("message"), tc.warns)
				assert.Equal(t, tc.version, warnings[0].str("claude_version"))
				assert.Equal(t, runner.TestedRange.String(), warnings[0].str("tested"))
			}
			p.signal(syscall.SIGTERM)
			require.Equal(t, exitOK, p.waitExit())
		})
	}
}
