package transcript

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/export")

// TestExportGolden renders every real transcript in testdata/cli, and a
// hostile one, and compares with testdata/export/<name>.md.
func TestExportGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "cli", "*.jsonl"))
	require.NoError(t, err)
	inputs = append(inputs, filepath.Join("testdata", "hostile.jsonl"))
	require.Greater(t, len(inputs), 5)
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".jsonl")
		t.Run(name, func(t *testing.T) {
			got, err := Export(in, ExportOptions{})
			require.NoError(t, err)
			golden := filepath.Join("testdata", "export", name+".md")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run with -update to create it")
			assert.Equal(t, string(want), got)
			again, err := Export(in, ExportOptions{})
			require.NoError(t, err)
			assert.Equal(t, got, again, "stable output")
		})
	}
}

// TestExportLeavesOut: what the export must never show, whatever the
// golden says.
func TestExportLeavesOut(t *testing.T) {
	md, err := Export(filepath.Join("testdata", "hostile.jsonl"), ExportOptions{})
	require.NoError(t, err)
	for _, never := range []string{"SECRET THOUGHTS", "SUBAGENT TEXT", "Permission denied", "Set model to opus", "Caveat", "still writi", "\n## not a heading"} {
		assert.NotContains(t, md, never)
	}
	assert.Contains(t, md, "- **Read** `/etc/shadow` — failed")
	assert.Contains(t, md, "Cost: $1.50")
	assert.Contains(t, md, "tokens 300 in, 13 out, 50 cache read, 20 cache write", "a message's usage counted once, sidechain's not at all")
}

func TestExportLocation(t *testing.T) {
	loc := time.FixedZone("CET", 3600)
	md, err := Export(filepath.Join("testdata", "hostile.jsonl"), ExportOptions{Location: loc})
	require.NoError(t, err)
	assert.Contains(t, md, "## You · 2026-12-01 11:00:00 CET")
}

func TestExportMaxBytes(t *testing.T) {
	in := filepath.Join("testdata", "cli", "sdk-then-terminal.jsonl")
	md, err := Export(in, ExportOptions{MaxBytes: 8 << 10})
	require.NoError(t, err)
	assert.Contains(t, md, "bytes are not included")
	assert.NotContains(t, md, "please run it", "the head is cut")
	assert.Contains(t, md, "slow two", "the tail is there")
}
