package transcript

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProjectName pins the names the real CLI 2.1.328 gave these working
// directories (observed in ~/.claude/projects after a run in each).
func TestProjectName(t *testing.T) {
	long := "/tmp/explore/paths/" + strings.Repeat("a", 120) + "/" + strings.Repeat("b", 100) + "/c.d_e"
	tests := []struct{ cwd, want string }{
		{"/tmp/explore/work1", "-tmp-explore-work1"},
		{"/tmp/explore/paths/dots.and_under-score", "-tmp-explore-paths-dots-and-under-score"},
		{"/tmp/explore/paths/Ünïcode ü/日本", "-tmp-explore-paths--n-code-----"},
		{"/tmp/explore/paths/emoji😀x", "-tmp-explore-paths-emoji--x"}, // two UTF-16 units
		{"/tmp/explore/paths/repo/.worktrees/x", "-tmp-explore-paths-repo--worktrees-x"},
		{"/tmp/explore/gitrepo/.claude/worktrees/wt2", "-tmp-explore-gitrepo--claude-worktrees-wt2"},
		{long, "-tmp-explore-paths-" + strings.Repeat("a", 120) + "-" + strings.Repeat("b", 60) + "-ksycxx"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			got := ProjectName(tt.cwd)
			assert.Equal(t, tt.want, got)
			assert.LessOrEqual(t, len(got), maxName+1+7, "cut at 200 plus a short hash")
		})
	}
}

// TestProjectNameCut checks the cut happens past exactly 200 units, and that
// a name of exactly 200 is kept whole.
func TestProjectNameCut(t *testing.T) {
	at200 := "/" + strings.Repeat("x", 199)
	assert.Equal(t, "-"+strings.Repeat("x", 199), ProjectName(at200))
	over := at200 + "y"
	got := ProjectName(over)
	require.True(t, strings.HasPrefix(got, "-"+strings.Repeat("x", 199)+"-"), got)
	assert.NotEqual(t, ProjectName(over+"z"), got, "the hash tells long paths with one prefix apart")
}

func TestAbsOfMinInt32(t *testing.T) {
	// JavaScript's Math.abs(-2**31) is 2**31, not -2**31.
	assert.Equal(t, int64(1)<<31, abs(math.MinInt32))
}

func TestDirResolvesSymlinks(t *testing.T) {
	home, real := t.TempDir(), t.TempDir()
	real, err := filepath.EvalSymlinks(real)
	require.NoError(t, err)
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(real, link))
	assert.Equal(t, Dir(home, real), Dir(home, link), "the CLI keys sessions by its physical cwd")
	assert.Equal(t, filepath.Join(home, ".claude", "projects", ProjectName(real)), Dir(home, real+"/"))
}

func TestPath(t *testing.T) {
	const id = SessionID("741f4ad2-102a-49d9-bd7d-a37b8e4e9cc4")
	p, err := Path("/home/dev", "/nonexistent/project", id)
	require.NoError(t, err)
	assert.Equal(t, "/home/dev/.claude/projects/-nonexistent-project/"+string(id)+".jsonl", p)

	for _, bad := range []SessionID{"", "../../etc/passwd", "741f4ad2-102a-49d9-bd7d-a37b8e4e9cc", "741f4ad2/102a-49d9-bd7d-a37b8e4e9cc4", "741f4ad2-102a-49d9-bd7d-a37b8e4e9cg4"} {
		_, err := Path("/home/dev", "/p", bad)
		assert.ErrorIs(t, err, ErrBadSessionID, "%q", bad)
	}
	assert.True(t, SessionID("741F4AD2-102A-49D9-BD7D-A37B8E4E9CC4").Valid())
}
