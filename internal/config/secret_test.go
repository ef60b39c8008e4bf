package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSecretReveal(t *testing.T) {
	s := NewSecret(testToken)
	assert.Equal(t, testToken, s.Reveal())
	assert.False(t, s.IsZero())
	assert.True(t, Secret{}.IsZero())

	var u Secret
	require.NoError(t, u.UnmarshalText([]byte(testToken)))
	assert.Equal(t, s, u)
}

// secretHolders are the shapes a token might be printed in by accident: the
// bare value, a pointer, the section, the whole config and a pointer to it.
func secretHolders() map[string]any {
	s := NewSecret(testToken)
	cfg := Default()
	cfg.Telegram.BotToken = s
	return map[string]any{
		"secret":   s,
		"pointer":  &s,
		"section":  cfg.Telegram,
		"config":   cfg,
		"config *": &cfg,
		"slice":    []Secret{s},
		"map":      map[string]Secret{"t": s},
	}
}

func TestSecretNeverPrintedByFmt(t *testing.T) {
	for name, v := range secretHolders() {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T %v"} {
			t.Run(name+" "+verb, func(t *testing.T) {
				out := fmt.Sprintf(verb, v)
				assert.NotContains(t, out, testTokenSecret)
				if name == "secret" && verb != "%T %v" {
					assert.Equal(t, redacted, out)
				}
			})
		}
	}
	assert.Equal(t, redacted, fmt.Sprint(NewSecret(testToken)))
	assert.Equal(t, "token [redacted]", fmt.Errorf("token %v", NewSecret(testToken)).Error())
}

func TestSecretNeverPrintedByEncoders(t *testing.T) {
	for name, v := range secretHolders() {
		t.Run(name, func(t *testing.T) {
			j, err := json.Marshal(v)
			require.NoError(t, err)
			assert.NotContains(t, string(j), testTokenSecret)
			assert.Contains(t, string(j), redacted)
		})
	}

	var buf bytes.Buffer
	require.NoError(t, toml.NewEncoder(&buf).Encode(secretHolders()["config"]))
	assert.NotContains(t, buf.String(), testTokenSecret)
	assert.Contains(t, buf.String(), `bot_token = "[redacted]"`)
}

func TestSecretNeverPrintedByLoggers(t *testing.T) {
	s := NewSecret(testToken)
	cfg := secretHolders()["config"]

	var zbuf bytes.Buffer
	zl := zerolog.New(&zbuf)
	zl.Info().
		Interface("interface", s).
		Any("any", s).
		Stringer("stringer", s).
		Interface("config", cfg).
		Msgf("formatted %v %+v", s, cfg)
	zl.Error().Err(fmt.Errorf("wrapped: %v", s)).Send()
	assert.NotContains(t, zbuf.String(), testTokenSecret)
	for _, want := range []string{`"interface":"[redacted]"`, `"any":"[redacted]"`, `"stringer":"[redacted]"`, `"BotToken":"[redacted]"`, `"error":"wrapped: [redacted]"`} {
		assert.Contains(t, zbuf.String(), want)
	}

	var cbuf bytes.Buffer
	cl := zerolog.New(zerolog.ConsoleWriter{Out: &cbuf, NoColor: true})
	cl.Info().Any("token", s).Interface("config", cfg).Send()
	assert.NotContains(t, cbuf.String(), testTokenSecret)
	assert.Contains(t, cbuf.String(), "token="+redacted)

	var sbuf bytes.Buffer
	slog.New(slog.NewJSONHandler(&sbuf, nil)).Info("x", "token", s, "config", cfg)
	assert.NotContains(t, sbuf.String(), testTokenSecret)
	assert.Contains(t, sbuf.String(), `"token":"`+redacted+`"`)
}

// TestSecretsListsEverySecretKey: every key of type Secret reaches the log
// redactor, including one added later.
func TestSecretsListsEverySecretKey(t *testing.T) {
	c := Default()
	var want []string
	for _, f := range c.fields() {
		if _, ok := f.value.Interface().(Secret); ok {
			v := "secret-of-" + f.key
			f.value.Set(reflect.ValueOf(NewSecret(v)))
			want = append(want, v)
		}
	}
	require.Len(t, want, 2, "telegram.bot_token and voice.api_key")
	assert.ElementsMatch(t, want, c.Secrets())
	assert.Empty(t, (&Config{}).Secrets(), "no empty secret")
}
