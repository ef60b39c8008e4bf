package voice_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/voice"
	"github.com/untether/untether/internal/voice/voicefake"
)

const key = "sk-test-0123456789abcdef"

func TestEndpointSendsTheFormAndReadsTheText(t *testing.T) {
	srv := voicefake.New(t, voicefake.WithKey(key), voicefake.WithTranscript(func(r voicefake.Request) string {
		return "  hello\n world  "
	}))
	e := voice.Endpoint{URL: srv.URL(), Key: key, Model: "whisper-1", Language: "en"}
	audio := []byte("OggS opus bytes")
	text, err := e.Transcribe(context.Background(), voice.Audio{Data: audio, Name: "voice.ogg", MimeType: "audio/ogg"})
	require.NoError(t, err)
	assert.Equal(t, "hello world", text)
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	r := reqs[0]
	assert.Equal(t, "Bearer "+key, r.Auth)
	assert.Equal(t, "whisper-1", r.Model)
	assert.Equal(t, "en", r.Language)
	assert.Equal(t, "json", r.ResponseFormat)
	assert.Equal(t, "voice.ogg", r.FileName)
	assert.Equal(t, "audio/ogg", r.ContentType)
	assert.Equal(t, audio, r.Audio, "the audio arrives byte for byte")

	_, err = voice.Endpoint{URL: srv.URL(), Key: key, Model: "whisper-1"}.Transcribe(context.Background(), voice.Audio{Data: audio, Name: "v.ogg"})
	require.NoError(t, err)
	assert.Empty(t, srv.Requests()[1].Language, "no language: the endpoint detects it")
}

func TestEndpointErrors(t *testing.T) {
	srv := voicefake.New(t, voicefake.WithKey(key), voicefake.WithTranscript(func(voicefake.Request) string { return " " }))
	audio := voice.Audio{Data: []byte("x"), Name: "v.ogg"}
	ok := voice.Endpoint{URL: srv.URL(), Key: key, Model: "whisper-1"}

	_, err := voice.Endpoint{URL: srv.URL(), Key: "wrong-key-42", Model: "m"}.Transcribe(context.Background(), audio)
	var he *voice.HTTPError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, http.StatusUnauthorized, he.Status)
	assert.Contains(t, err.Error(), "Incorrect API key")
	assert.NotContains(t, err.Error(), "wrong-key-42")

	srv.FailNext(1, http.StatusServiceUnavailable)
	_, err = ok.Transcribe(context.Background(), audio)
	require.ErrorAs(t, err, &he)
	assert.Equal(t, 503, he.Status)

	_, err = ok.Transcribe(context.Background(), audio)
	assert.ErrorIs(t, err, voice.ErrEmpty, "an answer without words")

	srv.Stall(5 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err = ok.Transcribe(ctx, audio)
	cancel()
	assert.ErrorIs(t, err, voice.ErrUnreachable, "a timeout")
	srv.Stall(0)

	_, err = voice.Endpoint{URL: "http://127.0.0.1:1/v1/audio/transcriptions", Key: key, Model: "m"}.Transcribe(context.Background(), audio)
	assert.ErrorIs(t, err, voice.ErrUnreachable, "nothing listening")
	assert.NotContains(t, err.Error(), key)
}

func TestCommandRunsOnTheConvertedWAV(t *testing.T) {
	voicefake.RequireTools(t, "ffmpeg")
	c := voice.Command{FFmpeg: "ffmpeg", Argv: []string{"sh", "-c", `head -c 4 "$1"; echo " from $(basename "$1")"`, "sh", "{wav}"}}
	text, err := c.Transcribe(context.Background(), voice.Audio{Data: voice.SilentWAV(0.5), Name: "note.wav"})
	require.NoError(t, err)
	assert.Equal(t, "RIFF from voice.wav", text, "the program got the converted WAV's path")

	_, err = voice.Command{FFmpeg: "ffmpeg", Argv: []string{"sh", "-c", "echo broken model >&2; exit 3", "{wav}"}}.
		Transcribe(context.Background(), voice.Audio{Data: voice.SilentWAV(0.5), Name: "n.wav"})
	var ce *voice.CommandError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "sh", ce.Step)
	assert.Contains(t, err.Error(), "broken model")

	_, err = c.Transcribe(context.Background(), voice.Audio{Data: []byte("not audio at all"), Name: "n.ogg"})
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "ffmpeg", ce.Step)

	_, err = voice.Command{FFmpeg: "ffmpeg", Argv: []string{"sh", "-c", "true", "{wav}"}}.Transcribe(context.Background(), voice.Audio{Data: voice.SilentWAV(0.2), Name: "n.wav"})
	assert.ErrorIs(t, err, voice.ErrEmpty)

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = voice.Command{FFmpeg: "ffmpeg", Argv: []string{"sh", "-c", "sleep 10", "{wav}"}}.Transcribe(ctx, voice.Audio{Data: voice.SilentWAV(0.2), Name: "n.wav"})
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, err.Error(), "timed out")
}

// TestCommandRealPipeline: espeak-ng speaks digits, ffmpeg makes an
// OGG/Opus voice note of it, the command backend converts it back, and
// pocketsphinx recognises the digits.
func TestCommandRealPipeline(t *testing.T) {
	ogg := voicefake.SpokenOGG(t, "four two eight one")
	c := voice.Command{FFmpeg: "ffmpeg", Argv: voicefake.PocketsphinxCommand(t)}
	text, err := c.Transcribe(context.Background(), voice.Audio{Data: ogg, Name: "voice.ogg", MimeType: "audio/ogg"})
	require.NoError(t, err)
	assert.True(t, voicefake.SaysInOrder(text, "four", "two", "eight", "one"), "heard %q", text)
}

func TestProbe(t *testing.T) {
	srv := voicefake.New(t)
	require.NoError(t, voice.Probe(context.Background(), voice.Endpoint{URL: srv.URL(), Model: "m"}))
	r := srv.Requests()[0]
	assert.True(t, strings.HasPrefix(string(r.Audio), "RIFF"), "a WAV file")
	srv.FailNext(1, 500)
	err := voice.Probe(context.Background(), voice.Endpoint{URL: srv.URL(), Model: "m"})
	var he *voice.HTTPError
	assert.True(t, errors.As(err, &he))
}
