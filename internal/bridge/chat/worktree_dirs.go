package chat

import (
	"io/fs"
	"os"
	"path/filepath"
)

// WorktreesDir holds a project's worktrees, inside the project.
const WorktreesDir = ".worktrees"

func WorktreeDir(path, branch string) string { return filepath.Join(path, WorktreesDir, branch) }

// worktreeDirs finds the worktrees under path's .worktrees on disk, without
// git: each directory holding a .git (a worktree has a .git file) is one,
// at any depth, since a branch name may have slashes (.worktrees/feature/x).
// Links are not followed.
func worktreeDirs(path string) []string {
	var dirs []string
	root := filepath.Join(path, WorktreesDir)
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil // unreadable, or a file: not a worktree
		}
		if p == root {
			return nil
		}
		if _, err := os.Lstat(filepath.Join(p, ".git")); err == nil {
			dirs = append(dirs, p)
			return fs.SkipDir
		}
		return nil
	})
	return dirs
}
