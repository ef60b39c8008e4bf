package main

import (
	"context"
	"net/http"
	"net/url"
	"os/exec"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/voice"
)

// voiceChecks reports on [voice]: the endpoint's URL, or that the command
// and ffmpeg can be found; with --online it transcribes a second of
// silence through the backend. The API key is never printed; the URL is
// shown without its query, which might carry one.
func voiceChecks(ctx context.Context, cfg *config.Config, online bool, say func(level, format string, a ...any)) {
	v := cfg.Voice
	if !v.Enabled() {
		return // off: voice notes are answered with how to turn it on
	}
	var t voice.Transcriber
	if v.APIURL != "" {
		shown := v.APIURL
		if u, err := url.Parse(v.APIURL); err == nil {
			u.RawQuery, u.Fragment, u.User = "", "", nil
			shown = u.String()
		}
		key := "with an API key"
		if v.APIKey.IsZero() {
			key = "without an API key (fine for a local server; hosted ones refuse it)"
		}
		say("ok", "voice: transcription endpoint %s, model %s, %s", shown, v.Model, key)
		t = voice.Endpoint{URL: v.APIURL, Key: v.APIKey.Reveal(), Model: v.Model, Language: v.Language, Client: &http.Client{}}
	} else {
		missing := false
		for _, bin := range []string{v.Command[0], v.FFmpeg} {
			if _, err := exec.LookPath(bin); err != nil {
				say("error", "voice: %s not found (%v); install it or fix [voice] command / ffmpeg", bin, err)
				missing = true
			} else {
				say("ok", "voice: %s is installed", bin)
			}
		}
		if missing {
			return
		}
		t = voice.Command{Argv: v.Command, FFmpeg: v.FFmpeg}
	}
	if !online {
		return
	}
	pctx, cancel := context.WithTimeout(ctx, v.Timeout.Std())
	defer cancel()
	if err := voice.Probe(pctx, t); err != nil {
		say("error", "voice: %v", err)
		return
	}
	say("ok", "voice: transcribed a test clip")
}
