package config

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseListen(t *testing.T) {
	cases := []struct {
		addr     string
		ok       bool
		loopback bool
	}{
		{"127.0.0.1:9464", true, true},
		{"127.9.9.9:1", true, true},
		{"[::1]:9464", true, true},
		{"localhost:9464", true, true},
		{"0.0.0.0:9464", true, false},
		{":9464", true, false}, // every interface
		{"[::]:9464", true, false},
		{"192.168.1.10:9464", true, false},
		{"metrics.example.org:9464", true, false},
		{"127.0.0.1:65535", true, true},
		{"127.0.0.1", false, false},
		{"localhost", false, false},
		{"127.0.0.1:0", false, false}, // a random port nobody could scrape
		{"127.0.0.1:65536", false, false},
		{"127.0.0.1:http", false, false},
		{"127.0.0.1:-1", false, false},
		{"::1:9464", false, false}, // IPv6 needs brackets
		{"bad host:9464", false, false},
		{"a/b:9464", false, false},
		{"http://127.0.0.1:9464", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.addr, func(t *testing.T) {
			_, err := ParseListen(tc.addr)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
			assert.Equal(t, tc.loopback, ListenIsLoopback(tc.addr))
		})
	}
}

// TestTriggerSecrets: a trigger's secret, inline or from the environment,
// reaches the log redactor and never an error message or the dump.
func TestTriggerSecrets(t *testing.T) {
	const inline, fromEnv = "inline-secret-0123456789", "env-secret-0123456789ab"
	dir := t.TempDir()
	doc := with(dir, `
[[triggers]]
name = "a"
secret = "`+inline+`"
chat_id = 1001
prompt = "x"

[[triggers]]
name = "b"
secret_env = "HOOK_B"
chat_id = 1001
prompt = "y"
`)
	cfg, err := Parse([]byte(doc), envMap(map[string]string{"HOME": dir, "HOOK_B": fromEnv}))
	require.NoError(t, err)
	assert.Equal(t, fromEnv, cfg.Triggers[1].Secret.Reveal())
	assert.Subset(t, cfg.Secrets(), []string{inline, fromEnv})
	assert.NotContains(t, cfg.Dump(), inline)
	assert.NotContains(t, cfg.Dump(), fromEnv)

	// A trigger made invalid in every other way still keeps its secret out
	// of the error.
	bad := with(dir, `
[[triggers]]
name = "a b"
secret = "`+inline+`"
chat_id = 5
project = "nope"
prompt = "{{"
`)
	_, err = Parse([]byte(bad), envMap(map[string]string{"HOME": dir}))
	var ve *ValidationError
	require.True(t, errors.As(err, &ve), "%v", err)
	assert.Len(t, ve.Problems, 4)
	assert.NotContains(t, err.Error(), inline)
}

// TestTriggerChatAllowedByAnyUser: with allow_any_user, a private chat
// needs no listing, as for [[schedules]]; a group still does.
func TestTriggerChatAllowedByAnyUser(t *testing.T) {
	dir := t.TempDir()
	doc := with(dir, `telegram.allow_any_user = true
[[triggers]]
name = "a"
secret = "0123456789abcdef"
chat_id = 4242
prompt = "x"

[[triggers]]
name = "b"
secret = "0123456789abcdef"
chat_id = -4242
prompt = "x"
`)
	_, err := Parse([]byte(doc), envMap(map[string]string{"HOME": dir}))
	var ve *ValidationError
	require.True(t, errors.As(err, &ve), "%v", err)
	require.Len(t, ve.Problems, 1)
	assert.Equal(t, "triggers[1].chat_id", ve.Problems[0].Key)
}
