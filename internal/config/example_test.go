package config

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const examplePath = "../../untether.example.toml"

// readExample returns the example file with claude.workdir pointed at an
// existing temporary directory, and an env with a temporary HOME.
func readExample(t *testing.T) ([]byte, func(string) string) {
	t.Helper()
	data, err := os.ReadFile(examplePath)
	require.NoError(t, err)
	workdirLine := regexp.MustCompile(`(?m)^workdir = ".*"$`)
	require.Len(t, workdirLine.FindAll(data, -1), 1, "the example sets claude.workdir exactly once")
	data = workdirLine.ReplaceAll(data, []byte(`workdir = "`+t.TempDir()+`"`))
	return data, envMap(map[string]string{"HOME": t.TempDir()})
}

func TestExampleLoads(t *testing.T) {
	data, env := readExample(t)
	cfg, err := Parse(data, env)
	require.NoError(t, err)

	// Apart from the three required values, the example documents the
	// defaults: loading only the required keys must give the same config.
	required := "telegram.bot_token = " + quoteString(cfg.Telegram.BotToken.Reveal()) + "\n" +
		"telegram.allowed_user_ids = " + tomlValue(reflect.ValueOf(cfg.Telegram.AllowedUserIDs)) + "\n" +
		"claude.workdir = " + quoteString(cfg.Claude.Workdir) + "\n"
	defaults, err := Parse([]byte(required), env)
	require.NoError(t, err)
	reload, restart := defaults.Diff(cfg)
	assert.Empty(t, reload, "example values that differ from the defaults")
	assert.Empty(t, restart, "example values that differ from the defaults")
}

// undocumentedYet are keys whose feature is built but not yet usable end to
// end; the example documents them when it is. TestExampleHasEveryKey fails
// once the example sets one of them, so the list cannot outlive its reason.
// None is waiting now.
var undocumentedYet []string

// documentedKeys is schemaKeys without undocumentedYet.
func documentedKeys() []string {
	var keys []string
	for _, k := range schemaKeys() {
		if !slices.Contains(undocumentedYet, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

func TestExampleHasEveryKey(t *testing.T) {
	data, _ := readExample(t)
	var doc map[string]any
	md, err := toml.Decode(string(data), &doc)
	require.NoError(t, err)
	keys := documentedKeys()
	require.Greater(t, len(keys), 20, "the schema walk found too few keys")
	for _, key := range keys {
		assert.True(t, md.IsDefined(strings.Split(key, ".")...), "untether.example.toml does not set %s", key)
	}
	for _, key := range undocumentedYet {
		assert.Contains(t, schemaKeys(), key)
		assert.False(t, md.IsDefined(strings.Split(key, ".")...), "the example documents %s: remove it from undocumentedYet", key)
	}
}

// TestExampleExplainsEveryKey requires a comment directly above each key,
// so the example stays a newcomer's documentation.
func TestExampleExplainsEveryKey(t *testing.T) {
	data, _ := readExample(t)
	lines := strings.Split(string(data), "\n")
	assignment := regexp.MustCompile(`^[a-z_]+ = `)
	n := 0
	for i, line := range lines {
		if !assignment.MatchString(line) {
			continue
		}
		n++
		require.Positive(t, i)
		assert.True(t, strings.HasPrefix(lines[i-1], "#"), "line %d (%s) has no comment above it", i+1, line)
	}
	assert.Len(t, documentedKeys(), n, "one assignment per schema key")
}

// TestExampleReloadMarkers keeps the "(reload)" notes in the example in step
// with IsReloadable: a key's comment block carries the marker exactly when
// the key can be reloaded, unless its section's comment carries it for all.
func TestExampleReloadMarkers(t *testing.T) {
	data, _ := readExample(t)
	header := regexp.MustCompile(`^\[([a-z_.]+)\]$`)
	assignment := regexp.MustCompile(`^([a-z_]+) = `)
	var comment []string
	section, sectionReload := "", false
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "#"):
			comment = append(comment, line)
			continue
		case header.MatchString(line):
			section = header.FindStringSubmatch(line)[1]
			sectionReload = strings.Contains(strings.Join(comment, " "), "(reload)")
		case assignment.MatchString(line):
			key := assignment.FindStringSubmatch(line)[1]
			if section != "" { // a top-level key is a whole section (schedules, projects)
				key = section + "." + key
			}
			marked := sectionReload || strings.Contains(strings.Join(comment, " "), "(reload)")
			assert.Equal(t, IsReloadable(key), marked, "%s: reload marker in the example disagrees with IsReloadable", key)
		}
		comment = nil
	}
}
