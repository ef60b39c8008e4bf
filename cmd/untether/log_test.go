package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/config"
)

// The daemon's log never shows a secret of its config: the voice API key
// as well as the bot token (an HTTP library's error can carry either), and
// one a reload brings.
func TestLogRedactsEverySecret(t *testing.T) {
	cfg := config.Default()
	cfg.Telegram.BotToken = config.NewSecret("123456:bot-token-value")
	cfg.Voice.APIKey = config.NewSecret("sk-voice-key-value")
	cfg.Log.Format = "json"
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	require.NoError(t, err)
	defer f.Close()
	log, redactor := newLogger(&cfg, f)
	log.Error().Str("url", "https://api.example/v1/audio?key=sk-voice-key-value").
		Msg("transcribe: 401 for Bearer sk-voice-key-value via bot123456:bot-token-value")

	next := cfg
	next.Voice.APIKey = config.NewSecret("sk-reloaded-key")
	redactor.Add(next.Secrets()...)
	log.Warn().Msg("after the reload: sk-reloaded-key")

	raw, err := os.ReadFile(f.Name())
	require.NoError(t, err)
	out := string(raw)
	for _, secret := range []string{"sk-voice-key-value", "bot-token-value", "sk-reloaded-key"} {
		assert.NotContains(t, out, secret)
	}
	assert.Equal(t, 4, strings.Count(out, "[redacted]"), "every occurrence, not just the first")
}
