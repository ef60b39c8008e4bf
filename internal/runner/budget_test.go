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

// The budget cap is asked for at each spawn, so a resumed process gets what
// is left then; no budget means no flag.
func TestSessionMaxBudgetAskedAtEachSpawn(t *testing.T) {
	argv := filepath.Join(t.TempDir(), "argv")
	caps := []float64{0.5, 0.125, 0}
	asked := 0
	s, log := newFakeSession(t, fakeScript{ArgvFile: argv}, func(c *Config) {
		c.MaxBudgetUSD = func() float64 { asked++; return caps[asked-1] }
	})
	var got []string
	for i := range caps {
		n := log.len()
		send(t, s, "hello")
		log.waitFor(t, n, "turn completed", turnDone)
		raw, err := os.ReadFile(argv)
		require.NoError(t, err)
		args, _, _ := strings.Cut(string(raw), "--env--\n")
		got = append(got, argValue(strings.Split(args, "\n"), "--max-budget-usd"))
		if i < len(caps)-1 {
			require.NoError(t, s.CloseProcess(context.Background()))
		}
	}
	assert.Equal(t, []string{"0.5", "0.125", ""}, got)
	assert.Error(t, CheckExtraArgs([]string{"--max-budget-usd=3"}), "untether manages the flag")
}
