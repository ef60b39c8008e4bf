package config

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/config/*.golden.txt from the current output")

// goldenDir is shared with the rest of the repository's test data.
const goldenDir = "../../testdata/config"

// testVoiceKey is the voice API key the goldens read through api_key_env.
const testVoiceKey = "sk-test-voice-key-0123456789"

// TestGolden loads every testdata/config/*.toml and compares the outcome with
// the matching .golden.txt: the Dump of the loaded config for good-*.toml,
// the full error text for bad-*.toml. "@HOME@" in a file stands for a
// temporary home directory (which has a project/ and a claude-home/
// subdirectory), and is written back in the output so goldens are stable.
// TEST_VOICE_KEY is set in the environment, for voice.api_key_env.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.toml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)

	for _, file := range files {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			for _, d := range []string{"project", "claude-home"} {
				require.NoError(t, os.Mkdir(filepath.Join(home, d), 0o700))
			}
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			data = []byte(strings.ReplaceAll(string(data), "@HOME@", home))

			cfg, err := Parse(data, envMap(map[string]string{"HOME": home, "TEST_VOICE_KEY": testVoiceKey}))
			var got string
			switch {
			case strings.HasPrefix(name, "good-"):
				require.NoError(t, err)
				got = cfg.Dump()
			case strings.HasPrefix(name, "bad-"):
				require.Error(t, err)
				got = err.Error() + "\n"
			default:
				t.Fatalf("golden inputs are named good-*.toml or bad-*.toml, not %s", name)
			}
			got = strings.ReplaceAll(got, home, "@HOME@")
			assert.NotContains(t, got, testTokenSecret)
			assert.NotContains(t, got, testVoiceKey)

			golden := strings.TrimSuffix(file, ".toml") + ".golden.txt"
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test -run TestGolden -update to create it")
			assert.Equal(t, string(want), got)
		})
	}
}

// TestDumpRoundTrips checks that Dump is valid TOML describing the same
// config, which also guards tomlValue against a new field type it cannot
// render.
func TestDumpRoundTrips(t *testing.T) {
	home := t.TempDir()
	cfg := Default()
	cfg.Telegram.BotToken = NewSecret(testToken)
	cfg.Telegram.AllowedUserIDs = []int64{1, 2}
	cfg.Telegram.AllowedChatIDs = []int64{-100}
	cfg.Claude.Workdir = home
	cfg.Claude.ExtraArgs = []string{"--add-dir", `C:\odd "quoted"` + "\ttab"}
	cfg.Claude.Models = []string{"sonnet", "claude-opus-5-5"}
	cfg.Claude.Env = map[string]string{"B": "2", "A": "1\n", "with space": "x"}
	cfg.State.Dir = home
	cfg.Budget = Budget{DailyUSD: 2, MonthlyUSD: 30.25, WarnAt: 0.5}
	cfg.Schedules = []Schedule{{Chat: 1, Cron: "0 9 * * *", Prompt: "say \"hi\"", FreshSession: true},
		{Chat: 2, Thread: 3, Cron: "@daily", Prompt: "x", Timezone: "Asia/Tokyo"}}
	cfg.Projects = map[string]Project{
		"api": {Path: home, Description: "the API", AllowedModes: []PermissionMode{PermissionDefault},
			Env: map[string]string{"A": "1"}, ExtraArgs: []string{"--add-dir", "/x"}, SSHOptions: []string{}, AllowedChatIDs: []int64{1, -100}},
		"far.box": {Path: "~/src", Host: "me@far", SSHOptions: []string{"-p", "2222"}, AllowedModes: []PermissionMode{},
			Env: map[string]string{"B": "2"}, ExtraArgs: []string{}, WorktreeBase: "origin/main", AllowedChatIDs: []int64{}},
	}

	dump := cfg.Dump()
	assert.NotContains(t, dump, "<unsupported")
	assert.NotContains(t, dump, testTokenSecret)

	// Put the token back (Dump redacts it) and parse the dump.
	dump = strings.Replace(dump, `bot_token = "[redacted]"`, `bot_token = "`+testToken+`"`, 1)
	// "with space" is not a valid env name, so drop it before validating.
	dump = strings.Replace(dump, `, "with space" = "x"`, "", 1)
	back, err := Parse([]byte(dump), envMap(map[string]string{"HOME": home}))
	require.NoError(t, err, dump)
	delete(cfg.Claude.Env, "with space")
	assert.Equal(t, cfg, *back)
}
