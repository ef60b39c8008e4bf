package transcript

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf16"
)

// SessionID is a Claude Code session id: the CLI names a session's
// transcript <id>.jsonl, and every id it makes is a lowercase RFC 4122 UUID.
type SessionID string

// ErrBadSessionID means an id is not UUID-shaped, so it cannot name a
// transcript (and could, unchecked, name a file outside the directory).
var ErrBadSessionID = errors.New("not a session id")

// Valid reports whether id has the 8-4-4-4-12 hex shape of the CLI's ids.
// Upper-case hex is accepted: the CLI accepts it for --resume.
func (id SessionID) Valid() bool {
	s := string(id)
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isHex(c) {
				return false
			}
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// maxName is the CLI's limit on a project directory name (MTe=200 in
// 2.1.328): longer names are cut there and a hash of the whole path added.
const maxName = 200

// ProjectName is the name the CLI 2.1.328 gives the directory under
// ~/.claude/projects that holds the transcripts of sessions run in cwd.
//
// It is the CLI's own rule, read from its source and checked against real
// runs (see path_test.go): every UTF-16 code unit of the path that is not an
// ASCII letter or digit becomes '-' (so "é" gives one '-', "😀" two); a name
// longer than 200 is cut to 200 and "-" plus base 36 of |Java-style hash of
// the path's UTF-16 units| appended. cwd is used as given: the CLI uses its
// physical working directory (symlinks resolved), which Dir finds.
func ProjectName(cwd string) string {
	units := utf16.Encode([]rune(cwd))
	var b strings.Builder
	b.Grow(len(units))
	for _, u := range units {
		if u < 0x80 && isAlnum(byte(u)) {
			b.WriteByte(byte(u))
		} else {
			b.WriteByte('-')
		}
	}
	name := b.String()
	if len(name) <= maxName {
		return name
	}
	return name[:maxName] + "-" + strconv.FormatInt(abs(javaHash(units)), 36)
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// javaHash is the 32-bit s[0]*31^(n-1) + … + s[n-1] over UTF-16 code units,
// wrapping as JavaScript's `(h<<5)-h+c|0` does.
func javaHash(units []uint16) int32 {
	var h int32
	for _, u := range units {
		h = h*31 + int32(u)
	}
	return h
}

// abs widens first: Math.abs(-2^31) is 2^31 in JavaScript.
func abs(h int32) int64 {
	v := int64(h)
	if v < 0 {
		return -v
	}
	return v
}

// Dir is the CLI's transcript directory for sessions run in workdir by a CLI
// whose HOME is home: home/.claude/projects/ProjectName(physical workdir).
// workdir is made absolute and its symlinks resolved when it exists, as the
// CLI's own getcwd sees it; each git worktree is its own workdir and so has
// its own directory. It does not follow CLAUDE_CONFIG_DIR, which untether
// never sets.
func Dir(home, workdir string) string {
	return filepath.Join(home, ".claude", "projects", ProjectName(physical(workdir)))
}

func physical(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return filepath.Clean(dir)
}

// Path is the transcript file of session id run in workdir:
// Dir(home, workdir)/<id>.jsonl. It refuses an id that is not UUID-shaped.
func Path(home, workdir string, id SessionID) (string, error) {
	if !id.Valid() {
		return "", fmt.Errorf("transcript path for %q: %w", id, ErrBadSessionID)
	}
	return filepath.Join(Dir(home, workdir), string(id)+".jsonl"), nil
}
