package runner

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner/claudetest"
)

func TestVersionRangeFit(t *testing.T) {
	r := VersionRange{Min: "2.1.328", Max: "2.1.332"}
	tests := []struct {
		v    string
		want VersionFit
	}{
		{"2.1.328", VersionInRange},
		{"2.1.330", VersionInRange},
		{"2.1.332", VersionInRange},
		{"2.1.332-beta.1", VersionInRange}, // only x.y.z counts
		{"2.1.327", VersionOlder},
		{"2.0.999", VersionOlder},
		{"1.9.400", VersionOlder},
		{"2.1.333", VersionNewer},
		{"2.2.0", VersionNewer},
		{"10.0.0", VersionNewer}, // numeric, not lexical
	}
	for _, tc := range tests {
		got, err := r.Fit(tc.v)
		require.NoError(t, err, tc.v)
		assert.Equal(t, tc.want, got, tc.v)
	}
	for _, bad := range []string{"", "2.1", "v2.1.328", "banana"} {
		_, err := r.Fit(bad)
		assert.Error(t, err, "%q", bad)
	}
	_, err := VersionRange{Min: "x", Max: "2.1.332"}.Fit("2.1.330")
	assert.Error(t, err, "a broken bound is an error, not a silent pass")
	assert.Equal(t, "2.1.328–2.1.332", r.String())
	assert.Equal(t, "2.1.328", VersionRange{Min: "2.1.328", Max: "2.1.328"}.String())
}

// TestTestedRangeIsConsistent ties the supported range to the pin and to
// what the README tells users.
func TestTestedRangeIsConsistent(t *testing.T) {
	fit, err := TestedRange.Fit(TestedVersion)
	require.NoError(t, err)
	assert.Equal(t, VersionInRange, fit, "CI's pinned version is inside the supported range")
	assert.Equal(t, claudetest.Version, TestedVersion, "one pin")

	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	m := regexp.MustCompile(`tested with Claude Code \*\*([0-9.]+)–([0-9.]+)\*\*`).FindSubmatch(readme)
	require.NotNil(t, m, "README states the tested range as \"tested with Claude Code **x–y**\"")
	assert.Equal(t, TestedRange, VersionRange{Min: string(m[1]), Max: string(m[2])}, "README and runner.TestedRange agree")
}
