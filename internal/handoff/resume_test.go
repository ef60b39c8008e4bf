package handoff

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner"
)

var update = flag.Bool("update", false, "rewrite testdata/lines.golden from the current output")

const testID = runner.SessionID("5f0c6a2e-8d1b-4c3a-9e7f-0123456789ab")

// Accounts of the tables: a person, another person, the system unit's
// service account, root, and a systemd DynamicUser without a name.
var (
	alice   = Account{Name: "alice", UID: 1000, Home: "/home/alice", Shell: "/bin/bash"}
	bob     = Account{Name: "bob", UID: 1001, Home: "/home/bob", Shell: "/usr/bin/zsh"}
	service = Account{Name: "untether", UID: 998, Home: "/var/lib/untether", Shell: "/usr/sbin/nologin"}
	root    = Account{Name: "root", UID: 0, Home: "/root", Shell: "/bin/bash"}
	dynamic = Account{UID: 61234}
)

// local is a project on this machine run by alice, who owns it.
func local(dir string) Resume {
	return Resume{ID: testID, Dir: dir, Daemon: alice, Owner: alice}
}

func remote(host, dir string, opts ...string) Resume {
	return Resume{ID: testID, Dir: dir, Remote: &runner.Remote{Host: host, SSHOptions: opts}}
}

func with(r Resume, f func(*Resume)) Resume {
	f(&r)
	return r
}

// lineCases are the golden table: each input and the line it makes.
var lineCases = []struct {
	name string
	in   Resume
}{
	{"plain worktree", local("/srv/app/.worktrees/fix")},
	{"configured command name", with(local("/srv/app"), func(r *Resume) { r.Binary = "claude-beta" })},
	{"absolute binary", with(local("/srv/app"), func(r *Resume) { r.Binary = "/opt/claude/bin/claude" })},
	{"absolute binary with a space", with(local("/srv/app"), func(r *Resume) { r.Binary = "/opt/Claude Code/claude" })},
	{"home of its own", with(local("/srv/app"), func(r *Resume) { r.Home = "/srv/claude-home" })},
	{"home is the account's", with(local("/srv/app"), func(r *Resume) { r.Home = "/home/alice" })},
	{"quote space and unicode", local("/home/alice/it's my ünïcode 日本😀")},
	{"backslash dollar and bang", local(`/home/alice/a\b $HOME !x`)},
	{"newline and leading dash", local("/home/alice/-rf\nsecond line")},
	{"tilde is not home here", local("/home/alice/~/src")},
	{"system unit", Resume{ID: testID, Dir: "/srv/untether", Daemon: service, Owner: service}},
	{"system unit with a home of its own", Resume{ID: testID, Dir: "/srv/untether", Home: "/srv/claude", Daemon: service, Owner: service}},
	{"system unit with an awkward path", Resume{ID: testID, Dir: "/srv/$HOME's \"x\"", Daemon: service, Owner: service}},
	{"daemon is not the owner", Resume{ID: testID, Dir: "/home/bob/app", Daemon: alice, Owner: bob}},
	{"daemon without a name", Resume{ID: testID, Dir: "/srv/app", Daemon: dynamic, Owner: alice}},
	{"root owns it", Resume{ID: testID, Dir: "/root/app", Daemon: root, Owner: root}},
	{"root runs alice's", Resume{ID: testID, Dir: "/home/alice/app", Daemon: root, Owner: alice}},
	{"remote home-relative", remote("dev@gpu01", "~/src/model")},
	{"remote home itself", remote("dev@gpu01", "~/")},
	{"remote absolute with options", remote("gpu01", "/srv/model", "-p", "2222", "-o", "ProxyJump=bastion", "-i", "/home/alice/.ssh/gpu key")},
	{"remote awkward path", remote("dev@gpu01", `~/it's $x \y`)},
	{"remote home and binary", with(remote("dev@gpu01", "/srv/model"), func(r *Resume) {
		r.Home, r.Binary = "/data/claude", "/opt/claude/bin/claude"
	})},
	{"remote ssh client", with(remote("dev@gpu01", "/srv/model"), func(r *Resume) { r.Remote.SSH = "/usr/local/bin/ssh" })},
	{"remote ignores local accounts", with(remote("dev@gpu01", "/srv/model"), func(r *Resume) { r.Daemon, r.Owner = service, alice })},
}

// TestLineGolden: each input's line, as testdata/lines.golden has it
// (rewrite with -update; review the diff).
func TestLineGolden(t *testing.T) {
	var b strings.Builder
	for _, tc := range lineCases {
		line, err := tc.in.Line()
		require.NoError(t, err, tc.name)
		b.WriteString("## " + tc.name + "\n" + line + "\n\n")
	}
	golden := filepath.Join("testdata", "lines.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run with -update to create it")
	assert.Equal(t, string(want), b.String())
}

func TestLineRefuses(t *testing.T) {
	cases := []struct {
		name string
		in   Resume
		want error
	}{
		{"no session", Resume{Dir: "/srv/app"}, ErrInvalid},
		{"an id that is a flag", with(local("/srv/app"), func(r *Resume) { r.ID = "--dangerously-skip-permissions" }), ErrInvalid},
		{"uppercase id", with(local("/srv/app"), func(r *Resume) { r.ID = runner.SessionID(strings.ToUpper(string(testID))) }), ErrInvalid},
		{"relative directory", local("srv/app"), ErrInvalid},
		{"home-relative directory here", local("~/app"), ErrInvalid},
		{"relative remote directory", remote("gpu01", "src/model"), ErrInvalid},
		{"relative binary", with(local("/srv/app"), func(r *Resume) { r.Binary = "bin/claude" }), ErrInvalid},
		{"binary that is a flag", with(local("/srv/app"), func(r *Resume) { r.Binary = "-x" }), ErrInvalid},
		{"binary that is an assignment", with(local("/srv/app"), func(r *Resume) { r.Binary = "A=b" }), ErrInvalid},
		{"host that is a flag", remote("-oProxyCommand=x", "/srv"), ErrInvalid},
		{"no host", remote("", "/srv"), ErrInvalid},
		{"not UTF-8", local("/srv/\xff"), ErrUnshowable},
		{"carriage return", local("/srv/a\rb"), ErrUnshowable},
		{"escape", local("/srv/\x1b[31mred"), ErrUnshowable},
		{"NUL", local("/srv/a\x00b"), ErrUnshowable},
		{"bidi override", local("/srv/\u202eabc"), ErrUnshowable},
		{"control character in home", with(local("/srv/app"), func(r *Resume) { r.Home = "/h\x07" }), ErrUnshowable},
		{"control character in an ssh option", remote("gpu01", "/srv", "-o", "X=\x01"), ErrUnshowable},
	}
	for _, tc := range cases {
		line, err := tc.in.Line()
		assert.True(t, errors.Is(err, tc.want), "%s: got %q, %v; want %v", tc.name, line, err, tc.want)
		assert.Empty(t, line, tc.name)
	}
}

// TestSwitchTo is the rule for when the line becomes the daemon's account
// first.
func TestSwitchTo(t *testing.T) {
	cases := []struct {
		name          string
		daemon, owner Account
		want          *Account
	}{
		{"a person's daemon in their own project", alice, alice, nil},
		{"a person's daemon in another's project", alice, bob, &alice},
		{"the system unit", service, service, &service},
		{"a system account with a shell", Account{Name: "svc", UID: 500, Shell: "/bin/sh"}, Account{UID: 500}, &Account{Name: "svc", UID: 500, Shell: "/bin/sh"}},
		{"a person's UID with nologin", Account{Name: "x", UID: 2000, Shell: "/sbin/nologin"}, Account{UID: 2000}, &Account{Name: "x", UID: 2000, Shell: "/sbin/nologin"}},
		{"false as the shell", Account{Name: "x", UID: 2000, Shell: "/bin/false"}, Account{UID: 2000}, &Account{Name: "x", UID: 2000, Shell: "/bin/false"}},
		{"named untether with a person's UID", Account{Name: "untether", UID: 1500, Shell: "/bin/bash"}, Account{UID: 1500}, &Account{Name: "untether", UID: 1500, Shell: "/bin/bash"}},
		{"root in root's project", root, root, nil},
		{"root in a person's project", root, alice, &root},
		{"a dynamic user", dynamic, dynamic, nil},
		{"a dynamic user in a person's project", dynamic, alice, &dynamic},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, SwitchTo(tc.daemon, tc.owner), tc.name)
	}
}

func TestPasswdShells(t *testing.T) {
	p := filepath.Join(t.TempDir(), "passwd")
	require.NoError(t, os.WriteFile(p, []byte(strings.Join([]string{
		"root:x:0:0:root:/root:/bin/bash",
		"untether:x:998:998::/var/lib/untether:/usr/sbin/nologin",
		"# a comment",
		"broken:x:notanumber:1::/:/bin/sh",
		"short:x:5",
		"dup:x:998:998::/x:/bin/sh",
		"alice:x:1000:1000:Alice,,,:/home/alice:/usr/bin/fish",
	}, "\n")), 0o644))
	assert.Equal(t, map[int]string{0: "/bin/bash", 998: "/usr/sbin/nologin", 1000: "/usr/bin/fish"}, passwdShells(p))
	assert.Empty(t, passwdShells(filepath.Join(t.TempDir(), "missing")))
}

// TestLocalAccounts reads this process's account and a directory's owner
// from the real database.
func TestLocalAccounts(t *testing.T) {
	dir := t.TempDir()
	daemon, owner, err := LocalAccounts(dir)
	require.NoError(t, err)
	assert.Equal(t, os.Geteuid(), daemon.UID)
	assert.Equal(t, os.Geteuid(), owner.UID, "the test made the directory")
	assert.NotEmpty(t, daemon.Name)
	assert.NotEmpty(t, daemon.Home)
	assert.Equal(t, daemon, owner)
	_, _, err = LocalAccounts(filepath.Join(dir, "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
