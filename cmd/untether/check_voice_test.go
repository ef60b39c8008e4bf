package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/telegramtest"
	"github.com/untether/untether/internal/voice/voicefake"
)

// TestCheckVoice: `untether check` validates [voice] (the command and
// ffmpeg exist), and with --online transcribes a test clip through the
// endpoint or the command. The API key is never printed.
func TestCheckVoice(t *testing.T) {
	tg := telegramtest.New(t, telegramtest.WithBotIdentity("Untether", "untether_bot"))
	const key = "sk-check-voice-key-31337"
	srv := voicefake.New(t, voicefake.WithKey(key))
	online := func(p string) []string { return []string{"--config", p, "--online"} }
	endpoint := func(url, key string) func(c *daemonConfig, _ string) {
		return func(c *daemonConfig, _ string) {
			c.Tables = fmt.Sprintf("\n[voice]\napi_url = %q\napi_key = %q\n", url, key)
		}
	}
	command := func(t *testing.T, argv ...string) func(c *daemonConfig, _ string) {
		return func(c *daemonConfig, _ string) {
			voicefake.RequireTools(t, "ffmpeg")
			quoted := make([]string, len(argv))
			for i, a := range argv {
				quoted[i] = fmt.Sprintf("%q", a)
			}
			c.Tables = "\n[voice]\ncommand = [" + strings.Join(quoted, ", ") + "]\n"
		}
	}
	cases := []struct {
		checkCase
		cmd []string
	}{
		{checkCase: checkCase{name: "voice-endpoint", wantCode: exitOK, edit: endpoint(srv.URL(), key)}},
		{checkCase: checkCase{name: "voice-endpoint-online", args: online, wantCode: exitOK, edit: endpoint(srv.URL(), key)}},
		{checkCase: checkCase{name: "voice-endpoint-wrong-key-online", args: online, wantCode: exitConfig, edit: endpoint(srv.URL(), "sk-wrong-key-000")}},
		{checkCase: checkCase{name: "voice-endpoint-down-online", args: online, wantCode: exitConfig,
			edit: endpoint("http://127.0.0.1:1/v1/audio/transcriptions", key)}},
		{checkCase: checkCase{name: "voice-command-missing", wantCode: exitConfig}, cmd: []string{"no-such-transcriber", "{wav}"}},
		{checkCase: checkCase{name: "voice-command-online", args: online, wantCode: exitOK}, cmd: []string{"sh", "-c", "echo heard", "{wav}"}},
		{checkCase: checkCase{name: "voice-command-failing-online", args: online, wantCode: exitConfig},
			cmd: []string{"sh", "-c", "echo model missing >&2; exit 2", "{wav}"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cmd != nil {
				tc.edit = command(t, tc.cmd...)
			}
			got, code := runCheckCase(t, tg, tc.checkCase)
			got = strings.ReplaceAll(got, srv.URL(), "$VOICE")
			assert.Equal(t, tc.wantCode, code, "exit code; output:\n%s", got)
			assert.NotContains(t, got, key, "check never prints the voice key")
			assert.NotContains(t, got, "sk-wrong-key-000")
			golden(t, "check/"+tc.name+".golden", got)
		})
	}
}
