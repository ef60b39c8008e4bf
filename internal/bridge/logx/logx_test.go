package logx

import (
	"bytes"
	"errors"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
)

func TestRedactorBlanksSecretsInAnyField(t *testing.T) {
	var buf bytes.Buffer
	log := zerolog.New(NewRedactor(&buf, "123456:SECRET", ""))
	log.Error().Err(errors.New(`Post "https://api.telegram.org/bot123456:SECRET/getMe": dial tcp`)).
		Str("also", "x123456:SECRETx").Msg("getMe failed for 123456:SECRET")
	assert.NotContains(t, buf.String(), "SECRET")
	assert.Equal(t, 3, bytes.Count(buf.Bytes(), []byte("[redacted]")))
}

func TestRedactorAddsSecretsOfAReload(t *testing.T) {
	var buf bytes.Buffer
	r := NewRedactor(&buf, "old-token")
	log := zerolog.New(r)
	r.Add("new-voice-key", "", "old-token")
	log.Info().Msg("old-token then new-voice-key")
	assert.NotContains(t, buf.String(), "old-token")
	assert.NotContains(t, buf.String(), "new-voice-key")
	assert.Equal(t, 2, bytes.Count(buf.Bytes(), []byte("[redacted]")))
}
