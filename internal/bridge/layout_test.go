package bridge_test

import (
	"bufio"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The shape of the bridge (issue 23), held by a test so that it stays:
// a feature is a module that talks to the engine through its doors and
// never to another module; the engine knows no module; the bridge
// package itself stays a small layer of routing and wiring; every
// package says what it is in a doc.go; no file grows past what one
// reads in a sitting.

const modulePath = "github.com/untether/untether"

// repoRoot is the directory holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod above the test")
		dir = parent
	}
}

// imports lists what the package in dir imports, its tests' imports
// included: a test that reaches into another module is a dependency too.
func imports(t *testing.T, dir string) []string {
	t.Helper()
	pkg, err := build.ImportDir(dir, 0)
	require.NoError(t, err, dir)
	all := slices.Concat(pkg.Imports, pkg.TestImports, pkg.XTestImports)
	slices.Sort(all)
	return slices.Compact(all)
}

func TestModulesImportNoOtherModule(t *testing.T) {
	root := repoRoot(t)
	dirs, err := filepath.Glob(filepath.Join(root, "internal/bridge/modules/*"))
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, dir := range dirs {
		self := modulePath + "/internal/bridge/modules/" + filepath.Base(dir)
		for _, imp := range imports(t, dir) {
			assert.False(t, strings.HasPrefix(imp, modulePath+"/internal/bridge/modules/") && imp != self,
				"%s imports the module %s: modules never import each other (share through the engine's doors or a non-module package)", self, imp)
			assert.NotEqual(t, modulePath+"/internal/bridge", imp, "%s imports the bridge itself: a module knows only the engine", self)
		}
	}
}

func TestEngineImportsNoModule(t *testing.T) {
	root := repoRoot(t)
	for _, imp := range imports(t, filepath.Join(root, "internal/bridge/chat")) {
		assert.False(t, strings.HasPrefix(imp, modulePath+"/internal/bridge/modules/"),
			"the engine (internal/bridge/chat) imports the module %s: it must learn of features only through its registry", imp)
		assert.NotEqual(t, modulePath+"/internal/bridge", imp, "the engine imports the bridge that wires it")
	}
}

// maxBridgeFiles bounds package bridge itself: routing and wiring.
const maxBridgeFiles = 12

func TestBridgePackageStaysSmall(t *testing.T) {
	pkg, err := build.ImportDir(filepath.Join(repoRoot(t), "internal/bridge"), 0)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(pkg.GoFiles), maxBridgeFiles,
		"internal/bridge has %d non-test files (%v); a feature belongs in a module", len(pkg.GoFiles), pkg.GoFiles)
}

// maxFileLines bounds every non-test Go file of the repository.
const maxFileLines = 600

func TestNoFileIsTooLong(t *testing.T) {
	root := repoRoot(t)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != root || d.Name() == "testdata" || d.Name() == "node_modules") {
			return fs.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		n := lines(t, p)
		rel, _ := filepath.Rel(root, p)
		assert.LessOrEqual(t, n, maxFileLines, "%s has %d lines; split it by concern", rel, n)
		return nil
	})
	require.NoError(t, err)
}

func lines(t *testing.T, p string) int {
	t.Helper()
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		n++
	}
	require.NoError(t, sc.Err())
	return n
}

func TestEveryPackageHasADocGo(t *testing.T) {
	root := repoRoot(t)
	for _, top := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			if d.Name() == "testdata" {
				return fs.SkipDir
			}
			pkg, err := build.ImportDir(p, 0)
			if err != nil || len(pkg.GoFiles) == 0 {
				return nil //nolint:nilerr // not a package with code (only tests, or none)
			}
			rel, _ := filepath.Rel(root, p)
			doc := filepath.Join(p, "doc.go")
			f, err := parser.ParseFile(token.NewFileSet(), doc, nil, parser.PackageClauseOnly|parser.ParseComments)
			if !assert.NoError(t, err, "%s has no doc.go", rel) {
				return nil
			}
			assert.NotNil(t, f.Doc, "%s's doc.go has no package comment", rel)
			if f.Doc != nil {
				want := "Package " + f.Name.Name + " "
				if f.Name.Name == "main" {
					want = "Command " + path.Base(filepath.ToSlash(rel)) + " "
				}
				assert.True(t, strings.HasPrefix(f.Doc.Text(), want), "%s's package comment starts %q, not %q", rel, firstLine(f.Doc.Text()), want)
			}
			return nil
		})
		require.NoError(t, err)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
