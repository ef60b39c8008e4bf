package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSessionID(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"7b0c9a3e-1a2b-4c3d-8e4f-0123456789ab", true},
		{"00000000-0000-4000-8000-000000000000", true},
		{"", false},
		{"--dangerously-skip-permissions", false},
		{"--resume=7b0c9a3e-1a2b-4c3d-8e4f-0123456789ab", false},
		{"7B0C9A3E-1A2B-4C3D-8E4F-0123456789AB", false}, // not the CLI's form
		{"7b0c9a3e1a2b4c3d8e4f0123456789ab", false},
		{"{7b0c9a3e-1a2b-4c3d-8e4f-0123456789ab}", false},
		{"urn:uuid:7b0c9a3e-1a2b-4c3d-8e4f-0123456789ab", false},
		{"7b0c9a3e-1a2b-4c3d-8e4f-0123456789ab\n", false},
		{" 7b0c9a3e-1a2b-4c3d-8e4f-0123456789ab", false},
		{"7b0c9a3e-1a2b-4c3d-8e4f-0123456789ag", false},
		{"my session title", false}, // --resume also takes a title
	} {
		id, err := ParseSessionID(tc.in)
		if tc.ok {
			assert.NoError(t, err, tc.in)
			assert.Equal(t, SessionID(tc.in), id)
			assert.True(t, id.Valid())
		} else {
			assert.ErrorIs(t, err, ErrInvalidInput, "%q", tc.in)
			assert.Empty(t, id)
			assert.False(t, SessionID(tc.in).Valid(), "%q", tc.in)
		}
	}
	assert.True(t, NewSessionID().Valid())
}

func TestCheckModel(t *testing.T) {
	for _, ok := range []string{"", "sonnet", "opus", "claude-opus-4-5", "claude-sonnet-4-5[1m]", "sonnet[1m]",
		"claude-3-5-haiku-20241022", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5@20250929",
		"arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0",
		"claude_custom.v2"} {
		assert.NoError(t, CheckModel(ok), ok)
	}
	for _, bad := range []string{"x';touch /tmp/pwned;'", "--dangerously-skip-permissions", "-m", "son net", "a\nb",
		`x\`, "$(id)", "`id`", "a;b", "a|b", "a&b", "a>b", "a'b", `a"b`, "é", ".hidden", "/etc/passwd", "[1m]",
		strings.Repeat("a", MaxModelLen+1)} {
		err := CheckModel(bad)
		assert.ErrorIs(t, err, ErrInvalidInput, "%q", bad)
		if err != nil {
			assert.Contains(t, err.Error(), ModelRule)
		}
	}
}

func TestNewSessionRefusesIDsAndModelsThatAreNotArguments(t *testing.T) {
	_, err := NewSession(Config{Binary: "claude"}, "--dangerously-skip-permissions", true, 0)
	assert.ErrorIs(t, err, ErrInvalidInput)
	_, err = NewSession(Config{Binary: "claude", Model: "--dangerously-skip-permissions"}, "", false, 0)
	assert.ErrorIs(t, err, ErrInvalidInput)
	s, err := NewSession(Config{Binary: "claude", Model: "claude-sonnet-4-5[1m]"}, "7b0c9a3e-1a2b-4c3d-8e4f-0123456789ab", true, 0)
	require.NoError(t, err)
	assert.ErrorIs(t, s.AdoptModel("x';touch /tmp/pwned;'"), ErrInvalidInput)
	_, err = s.TrySetModel(context.Background(), "x';touch /tmp/pwned;'")
	assert.ErrorIs(t, err, ErrInvalidInput)
	assert.Equal(t, "claude-sonnet-4-5[1m]", s.Model(), "a refused model changes nothing")
}

// TestSessionNeverAdoptsASessionIDThatIsNotAUUID: a CLI whose frames name
// a session id like a flag does not get it back on the next command line,
// and no event carries it to the bridge (which would store and resume it).
func TestSessionNeverAdoptsASessionIDThatIsNotAUUID(t *testing.T) {
	const hostile = "--dangerously-skip-permissions"
	for _, cont := range []bool{false, true} {
		t.Run(map[bool]string{false: "a named session", true: "a --continue session"}[cont], func(t *testing.T) {
			argv := filepath.Join(t.TempDir(), "argv")
			s, log := newFakeSession(t, fakeScript{ArgvFile: argv, FrameSessionID: hostile}, func(c *Config) { c.Continue = cont })
			first := s.ID()
			send(t, s, "hello")
			ev, _ := log.waitFor(t, 0, "turn started", func(ev Event) bool { return is[TurnStarted](ev) })
			assert.Empty(t, ev.(TurnStarted).SessionID, "an event never carries an id that is not a UUID")
			ev, _ = log.waitFor(t, 0, "answer", turnDone)
			assert.Empty(t, ev.(TurnCompleted).SessionID)
			assert.Equal(t, first, s.ID(), "not adopted")

			require.NoError(t, s.CloseProcess(context.Background()))
			_, i := log.waitFor(t, 0, "process exited", func(ev Event) bool { return is[ProcessExited](ev) })
			send(t, s, "again")
			log.waitFor(t, i, "second answer", turnDone)
			raw, err := os.ReadFile(argv)
			require.NoError(t, err)
			args, _, _ := strings.Cut(string(raw), "--env--\n")
			assert.Contains(t, args, "\n--resume="+string(first)+"\n")
			assert.NotContains(t, args, hostile)
		})
	}
}
