package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseEffort(t *testing.T) {
	tests := []struct {
		in      string
		want    Effort
		wantErr bool
	}{
		{"low", EffortLow, false},
		{"medium", EffortMedium, false},
		{"high", EffortHigh, false},
		{"xhigh", EffortXHigh, false},
		{"max", EffortMax, false},
		{" High ", EffortHigh, false},
		{"MAX", EffortMax, false},
		{"", "", true},
		{"auto", "", true},      // the CLI's /effort knows it; --effort ignores it
		{"ultracode", "", true}, // a mode of the CLI's own, not a level
		{"x-high", "", true},
		{"--dangerously-skip-permissions", "", true},
		{"high\n", EffortHigh, false},
		{"hi gh", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseEffort(tt.in)
			if tt.wantErr {
				require.ErrorIs(t, err, ErrInvalidInput)
				assert.Contains(t, err.Error(), EffortRule)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.True(t, got.Valid())
		})
	}
	assert.False(t, Effort("High").Valid(), "only the exact spelling is valid: apply_flag_settings ignores others")
}

// readArgv returns the argv the fake CLI recorded at its last start.
func readArgv(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	args, _, _ := strings.Cut(string(raw), "--env--\n")
	return strings.Split(strings.TrimSuffix(args, "\n"), "\n")
}

// TestSessionEffortArgv: the effort is passed glued to its flag, only when
// set, and a changed one reaches the next spawn.
func TestSessionEffortArgv(t *testing.T) {
	argv := filepath.Join(t.TempDir(), "argv")
	s, log := newFakeSession(t, fakeScript{ArgvFile: argv}, func(c *Config) { c.Effort = EffortXHigh })
	send(t, s, "one")
	_, i := log.waitFor(t, 0, "answer", turnDone)
	assert.Contains(t, readArgv(t, argv), "--effort=xhigh")
	assert.Equal(t, EffortXHigh, s.Effort())

	require.NoError(t, s.AdoptEffort(""))
	require.NoError(t, s.CloseProcess(context.Background()))
	send(t, s, "two")
	log.waitFor(t, i+1, "second answer", turnDone)
	assert.Empty(t, argValue(readArgv(t, argv), "--effort"), "the CLI's default: no flag")

	for _, bad := range []Effort{"High", "auto", "--model=x", "low max"} {
		assert.ErrorIs(t, s.AdoptEffort(bad), ErrInvalidInput, "%q", bad)
	}
	assert.Equal(t, Effort(""), s.Effort(), "a refused effort changes nothing")
}

func TestNewSessionRefusesBadEffort(t *testing.T) {
	for _, bad := range []Effort{"High", "bogus", "max --verbose", " low"} {
		_, err := NewSession(Config{Binary: "claude", Effort: bad}, "", false, 0)
		assert.ErrorIs(t, err, ErrInvalidInput, "%q", bad)
	}
	assert.Error(t, CheckExtraArgs([]string{"--effort", "max"}), "untether manages the flag")
	assert.Error(t, CheckExtraArgs([]string{"--effort=max"}))
}

// TestSetEffortWithoutProcess: with no live process the change waits for
// the next spawn, and says so.
func TestSetEffortWithoutProcess(t *testing.T) {
	argv := filepath.Join(t.TempDir(), "argv")
	s, log := newFakeSession(t, fakeScript{ArgvFile: argv}, nil)
	ch, err := s.SetEffort(context.Background(), EffortMax)
	require.NoError(t, err)
	assert.False(t, ch.Live)
	send(t, s, "one")
	log.waitFor(t, 0, "answer", turnDone)
	assert.Equal(t, "max", argValue(readArgv(t, argv), "--effort"))

	_, err = s.SetEffort(context.Background(), "ultracode")
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Equal(t, EffortMax, s.Effort())
}

// TestSetEffortRefusedLive: a CLI that refuses the live change still gets
// the effort at its next start, and the caller learns it was not live.
func TestSetEffortRefusedLive(t *testing.T) {
	argv := filepath.Join(t.TempDir(), "argv")
	s, log := newFakeSession(t, fakeScript{ArgvFile: argv}, nil)
	send(t, s, "one")
	_, i := log.waitFor(t, 0, "answer", turnDone)
	ch, err := s.SetEffort(context.Background(), EffortLow)
	require.ErrorIs(t, err, ErrControl, "the fake CLI refuses apply_flag_settings")
	assert.False(t, ch.Live)
	require.NoError(t, s.CloseProcess(context.Background()))
	send(t, s, "two")
	log.waitFor(t, i+1, "second answer", turnDone)
	assert.Equal(t, "low", argValue(readArgv(t, argv), "--effort"))

	_, _, err = s.AppliedEffort(context.Background())
	assert.ErrorIs(t, err, ErrControl)
	_, err = s.ContextUsage(context.Background())
	assert.ErrorIs(t, err, ErrControl)
	require.NoError(t, s.CloseProcess(context.Background()))
	_, err = s.ContextUsage(context.Background())
	assert.True(t, errors.Is(err, ErrNoProcess), "%v", err)
}

func TestCompactDisabled(t *testing.T) {
	tests := []struct {
		env          map[string]string
		manual, auto bool
	}{
		{nil, false, false},
		{map[string]string{"DISABLE_AUTO_COMPACT": "1"}, false, true},
		{map[string]string{"DISABLE_AUTO_COMPACT": " TRUE "}, false, true},
		{map[string]string{"DISABLE_AUTO_COMPACT": "0"}, false, false},
		{map[string]string{"DISABLE_AUTO_COMPACT": "no"}, false, false},
		{map[string]string{"DISABLE_COMPACT": "on"}, true, true},
		{map[string]string{"DISABLE_COMPACT": "yes", "DISABLE_AUTO_COMPACT": "0"}, true, true},
		{map[string]string{"DISABLE_COMPACT": "2"}, false, false},
	}
	for _, tt := range tests {
		manual, auto := CompactDisabled(tt.env)
		assert.Equal(t, tt.manual, manual, "%v", tt.env)
		assert.Equal(t, tt.auto, auto, "%v", tt.env)
	}
}

func TestContextUsageAutoCompactPercent(t *testing.T) {
	u := ContextUsage{Tokens: 850_000, Window: 1_000_000, AutoCompact: true, AutoCompactAt: 967_000}
	assert.InDelta(t, 96.7, u.AutoCompactPercent(), 1e-9)
	u.AutoCompact = false
	assert.Zero(t, u.AutoCompactPercent())
	assert.Zero(t, ContextUsage{AutoCompact: true, AutoCompactAt: 5}.AutoCompactPercent(), "unknown window")
}
