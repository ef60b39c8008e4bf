package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestUsage runs the binary with every way of asking for help, and with
// wrong command lines: help goes to stdout with exit 0 and shows the overall
// usage plus the command's own flags (never the flag package's bare "Usage
// of run:"), a mistake goes to stderr with the same usage and exit 2, and
// nothing else happens (no config is read: there is none).
func TestUsage(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		wantCode int
	}{
		{"help", []string{"help"}, exitOK},
		{"dash-dash-help", []string{"--help"}, exitOK},
		{"dash-h", []string{"-h"}, exitOK},
		{"run-help", []string{"run", "--help"}, exitOK},
		{"run-h", []string{"run", "-h"}, exitOK},
		{"run-config-then-help", []string{"run", "--config", "/nonexistent.toml", "-help"}, exitOK},
		{"check-help", []string{"check", "--help"}, exitOK},
		{"check-h", []string{"check", "-h"}, exitOK},
		{"version-help", []string{"version", "--help"}, exitOK},
		{"help-check", []string{"help", "check"}, exitOK},
		{"help-version", []string{"help", "version"}, exitOK},
		{"help-help", []string{"help", "help"}, exitOK},
		{"help-dash-h", []string{"help", "-h"}, exitOK},
		{"help-dash-dash-help", []string{"help", "--help"}, exitOK},
		{"single-dash-help", []string{"-help"}, exitOK},
		{"version-h", []string{"version", "-h"}, exitOK},
		{"check-online-then-help", []string{"check", "--online", "--help"}, exitOK},
		{"unknown-flag", []string{"--frobnicate"}, exitUsage},
		{"run-unknown-flag", []string{"run", "--frobnicate"}, exitUsage},
		{"check-unknown-flag", []string{"check", "-x"}, exitUsage},
		{"version-unknown-flag", []string{"version", "--short"}, exitUsage},
		{"run-stray-argument", []string{"run", "check"}, exitUsage},
		{"check-missing-value", []string{"check", "--config"}, exitUsage},
		{"unknown-command", []string{"frobnicate"}, exitUsage},
		{"help-unknown-command", []string{"help", "frobnicate"}, exitUsage},
		{"help-two-commands", []string{"help", "run", "check"}, exitUsage},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			p := startProcess(t, baseEnv(home), tc.args...)
			code := p.waitExit()
			assert.Equal(t, tc.wantCode, code, "untether %v", tc.args)
			stdout, stderr := p.stdout.String(), p.stderr.String()
			assert.NotContains(t, stdout+stderr, "Usage of", "the flag package's own usage never shows")
			shown := stdout
			if tc.wantCode != exitOK {
				assert.Empty(t, stdout, "a mistake prints nothing on stdout")
				shown = stderr
			} else {
				assert.Empty(t, stderr, "help prints nothing on stderr")
			}
			assert.True(t, strings.HasPrefix(shown, "usage:\n") || strings.Contains(shown, "\n\nusage:\n"),
				"the overall usage is shown:\n%s", shown)
			var b strings.Builder
			b.WriteString("$ untether " + strings.Join(tc.args, " ") + "\n")
			b.WriteString(stdout)
			if stderr != "" {
				b.WriteString("--- stderr\n" + stderr)
			}
			b.WriteString("--- exit " + itoa(code) + "\n")
			golden(t, filepath.Join("usage", tc.name+".golden"), strings.ReplaceAll(b.String(), home, "$HOME"))
		})
	}
}
