package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/service/hookprompt"
)

// TestExampleTriggerLoads: the [[triggers]] table the example shows in its
// comments, uncommented, is a valid trigger (its secret from secret_env,
// as it suggests), and its prompt renders what it says from a
// workflow_run body.
func TestExampleTriggerLoads(t *testing.T) {
	data, env := readExample(t)
	text := string(data)
	start := strings.Index(text, "#   [[triggers]]\n")
	require.GreaterOrEqual(t, start, 0, "the example shows a [[triggers]] table")
	end := start + strings.Index(text[start:], "\n#\n")
	var table strings.Builder
	for _, line := range strings.Split(text[start:end], "\n") {
		line = strings.TrimPrefix(strings.TrimPrefix(line, "#"), "   ")
		if strings.HasPrefix(strings.TrimSpace(line), "#") || line == `secret = ""` {
			continue // its comments, and the inline secret it offers instead of secret_env
		}
		table.WriteString(line + "\n")
	}
	doc := strings.Replace(text, "triggers = []\n", "", 1) + "\n" + table.String()
	const secret = "0123456789abcdef0123456789abcdef"
	cfg, err := Parse([]byte(doc), func(k string) string {
		if k == "UNTETHER_HOOK_CI" {
			return secret
		}
		return env(k)
	})
	require.NoError(t, err, "the example's trigger:\n%s", table.String())
	require.Len(t, cfg.Triggers, 1)
	tr := cfg.Triggers[0]
	assert.Equal(t, "ci-failed", tr.Name)
	assert.Equal(t, secret, tr.Secret.Reveal())
	p, err := hookprompt.Parse(tr.Name, tr.Prompt)
	require.NoError(t, err)
	body, err := hookprompt.Decode([]byte(`{"workflow_run":{"conclusion":"failure","head_branch":"main",` +
		`"html_url":"https://github.com/o/r/actions/runs/1"},"repository":{"full_name":"o/r"}}`))
	require.NoError(t, err)
	out, _, err := p.Render(body, 1<<10)
	require.NoError(t, err)
	assert.Equal(t, "CI failed on o/r (main): https://github.com/o/r/actions/runs/1. Find out why.", out)
}
