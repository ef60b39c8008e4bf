package claudetest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConformanceCoversEveryRealCLIPackage keeps `make conformance` honest:
// every package with a test (not only a benchmark) that starts the real CLI
// is in the Makefile's CONFORMANCE_PKGS, so a new CLI release is checked by
// all of them.
func TestConformanceCoversEveryRealCLIPackage(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	root, err := ModuleRoot(wd)
	require.NoError(t, err)
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^CONFORMANCE_PKGS\s*:?=\s*(.+)$`).FindSubmatch(makefile)
	require.NotNil(t, m, "Makefile defines CONFORMANCE_PKGS")
	listed := strings.Fields(string(m[1]))

	starts := regexp.MustCompile(`\bclaudetest\.(New|Binary)\(`)
	var need []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		dir := "./" + filepath.ToSlash(rel)
		// This package's own smoke tests call New unqualified.
		usesCLI := starts.Match(src) || (dir == "./internal/runner/claudetest" && strings.Contains(string(src), "New(t, "))
		if usesCLI && strings.Contains(string(src), "\nfunc Test") && !slices.Contains(need, dir) {
			need = append(need, dir)
		}
		return nil
	})
	require.NoError(t, err)
	require.Contains(t, need, "./internal/runner", "the scan finds the known real-CLI tests")
	for _, dir := range need {
		assert.Contains(t, listed, dir, "%s has real-CLI tests; add it to CONFORMANCE_PKGS", dir)
	}
}
