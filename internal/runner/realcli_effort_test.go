package runner

import (
	"cmp"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner/fakeapi"
)

// apiEffort is the output_config.effort the CLI sent in a model call, ""
// when the request carried none.
func apiEffort(r fakeapi.Request) string {
	oc, _ := r.JSON["output_config"].(map[string]any)
	e, _ := oc["effort"].(string)
	return e
}

// lastModelCall is the latest model call the fake API answered.
func lastModelCall(t *testing.T, r *realRig) fakeapi.Request {
	t.Helper()
	calls := r.env.API.ModelCalls()
	require.NotEmpty(t, calls)
	return calls[len(calls)-1]
}

// turn sends text and waits for its answer, from event index from; it
// returns the index after the answer.
func (r *realRig) turn(t *testing.T, from int, text string) int {
	t.Helper()
	send(t, r.s, text)
	_, i := r.log.waitFor(t, from, "answer to "+text, answerIs("echo: "+text))
	return i + 1
}

// TestRealCLIEffortFlag: --effort=<level> reaches the API as
// output_config.effort, and get_settings reports the same level; without
// the flag the CLI sends its default, medium.
func TestRealCLIEffortFlag(t *testing.T) {
	for _, tt := range []struct {
		effort Effort
		want   string
	}{{"", "medium"}, {EffortLow, "low"}, {EffortMedium, "medium"}, {EffortHigh, "high"}, {EffortXHigh, "xhigh"}, {EffortMax, "max"}} {
		t.Run(cmp.Or(string(tt.effort), "default"), func(t *testing.T) {
			r := newRealSessionWith(t, fakeapi.Script{}, func(c *Config) { c.Effort = tt.effort })
			r.turn(t, 0, "hello")
			args := cliArgs(t, r.s.PID())
			if tt.effort == "" {
				assert.Empty(t, argValue(args, "--effort"))
			} else {
				assert.Contains(t, args, "--effort="+string(tt.effort))
			}
			assert.Equal(t, tt.want, apiEffort(lastModelCall(t, r)))
			applied, supported, err := r.s.AppliedEffort(context.Background())
			require.NoError(t, err)
			assert.True(t, supported)
			assert.Equal(t, Effort(tt.want), applied)
		})
	}
}

// TestRealCLISetEffortLive: apply_flag_settings changes the effort of the
// running process from its next API call, without a restart; "" goes back
// to the model's default (not to the --effort the process started with);
// and the next process starts with the last level set.
func TestRealCLISetEffortLive(t *testing.T) {
	r := newRealSessionWith(t, fakeapi.Script{}, func(c *Config) { c.Effort = EffortLow })
	i := r.turn(t, 0, "one")
	pid := r.s.PID()
	assert.Equal(t, "low", apiEffort(lastModelCall(t, r)))

	ctx := context.Background()
	ch, err := r.s.SetEffort(ctx, EffortMax)
	require.NoError(t, err)
	assert.Equal(t, EffortChange{Live: true, Applied: EffortMax, Supported: true}, ch)
	i = r.turn(t, i, "two")
	assert.Equal(t, "max", apiEffort(lastModelCall(t, r)))
	assert.Equal(t, pid, r.s.PID(), "changed live, not by a restart")

	ch, err = r.s.SetEffort(ctx, "")
	require.NoError(t, err)
	assert.Equal(t, EffortChange{Live: true, Applied: EffortMedium, Supported: true}, ch, "the model's default, not the spawn's low")
	i = r.turn(t, i, "three")
	assert.Equal(t, "medium", apiEffort(lastModelCall(t, r)))

	_, err = r.s.SetEffort(ctx, EffortHigh)
	require.NoError(t, err)
	require.NoError(t, r.s.CloseProcess(ctx))
	r.turn(t, i, "four")
	assert.NotEqual(t, pid, r.s.PID())
	assert.Contains(t, cliArgs(t, r.s.PID()), "--effort=high")
	assert.Equal(t, "high", apiEffort(lastModelCall(t, r)))
}

// TestRealCLIEffortDependsOnModel: what the API gets depends on the model,
// and AppliedEffort says so. claude-sonnet-4-5 takes no effort level (the
// request has no output_config at all); claude-opus-4-5 takes low, medium
// and high, and sends xhigh and max as high.
func TestRealCLIEffortDependsOnModel(t *testing.T) {
	t.Run("no levels", func(t *testing.T) {
		r := newRealSessionWith(t, fakeapi.Script{}, func(c *Config) { c.Model, c.Effort = "claude-sonnet-4-5", EffortHigh })
		r.turn(t, 0, "hello")
		call := lastModelCall(t, r)
		assert.Equal(t, "claude-sonnet-4-5", call.Model())
		assert.Nil(t, call.JSON["output_config"])
		applied, supported, err := r.s.AppliedEffort(context.Background())
		require.NoError(t, err)
		assert.False(t, supported)
		assert.Empty(t, applied)
	})
	t.Run("clamped", func(t *testing.T) {
		r := newRealSessionWith(t, fakeapi.Script{}, func(c *Config) { c.Model = "claude-opus-4-5" })
		i := r.turn(t, 0, "one")
		assert.Equal(t, "high", apiEffort(lastModelCall(t, r)), "this model's default")
		ch, err := r.s.SetEffort(context.Background(), EffortMax)
		require.NoError(t, err)
		assert.Equal(t, EffortChange{Live: true, Applied: EffortHigh, Supported: true}, ch)
		r.turn(t, i, "two")
		assert.Equal(t, "high", apiEffort(lastModelCall(t, r)))
	})
}
