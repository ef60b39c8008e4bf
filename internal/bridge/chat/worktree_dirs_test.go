package chat

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/config"
)

// TestProjectDirsFindsWorktreesWithSlashes: a branch named feature/x lives
// at .worktrees/feature/x; its .untether is pruned like any other, so
// projectDirs must name it (and not the plain directory above it, nor
// anything inside a worktree).
func TestProjectDirsFindsWorktreesWithSlashes(t *testing.T) {
	repo := t.TempDir()
	for _, wt := range []string{"main-fix", "feature/x", "feature/deep/y"} {
		dir := filepath.Join(repo, WorktreesDir, filepath.FromSlash(wt))
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub", ".worktrees", "z"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, ".git"), []byte("gitdir: elsewhere\n"), 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", ".worktrees", "z", ".git"), []byte("gitdir: x\n"), 0o600))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(repo, WorktreesDir, "empty"), 0o700))
	cfg := &config.Config{Projects: map[string]config.Project{"repo": {Path: repo}}}
	assert.ElementsMatch(t, []string{
		repo,
		filepath.Join(repo, WorktreesDir, "main-fix"),
		filepath.Join(repo, WorktreesDir, "feature", "x"),
		filepath.Join(repo, WorktreesDir, "feature", "deep", "y"),
	}, ProjectDirs(cfg))
}
