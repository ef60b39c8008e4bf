package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/runner/sshtest"
	"github.com/untether/untether/internal/telegramtest"
)

// TestCheckRemoteProjectsOnline: check --online reaches each project on
// another host through a real sshd on 127.0.0.1, and names the project
// whose host, directory or CLI is wrong.
func TestCheckRemoteProjectsOnline(t *testing.T) {
	srv := sshtest.Start(t)
	tg := telegramtest.New(t, telegramtest.WithBotIdentity("Untether", "untether_bot"))
	quote := func(ss []string) string {
		q := make([]string, len(ss))
		for i, s := range ss {
			q[i] = fmt.Sprintf("%q", s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	dir := t.TempDir()
	far := mkdir(t, dir, "far")
	unreachable := append(slices.Clone(srv.Options), "-o", "ConnectTimeout=5")
	got, code := runCheckCase(t, tg, checkCase{args: func(p string) []string { return []string{"--config", p, "--online"} },
		edit: func(c *daemonConfig, _ string) {
			c.Tables = fmt.Sprintf(`
[projects.far]
host = %q
path = %q
ssh_options = %s

[projects.nodir]
host = %q
path = %q
ssh_options = %s

[projects.noclaude]
host = %q
path = %q
ssh_options = %s
binary = "/nonexistent/claude"

[projects.nologin]
host = "nobody@127.0.0.1"
path = %q
ssh_options = %s
`, srv.Host, far, quote(srv.Options), srv.Host, filepath.Join(dir, "gone"), quote(srv.Options),
				srv.Host, far, quote(srv.Options), far, quote(unreachable))
		}})
	got = strings.ReplaceAll(got, srv.Host, "$SSH_HOST")
	got = strings.ReplaceAll(got, dir, "$TMP")
	assert.Equal(t, exitConfig, code, got)
	for _, want := range []string{
		"ok    project far: ssh $SSH_HOST works, $TMP/far exists there, claude $TESTED runs there",
		"error project nodir: working directory not found: $SSH_HOST:$TMP/gone: no such directory there",
		"error project noclaude: claude CLI binary not found: $SSH_HOST:/nonexistent/claude",
		"error project nologin: ssh could not reach the host nobody@127.0.0.1",
		"ok    telegram: the token belongs to @untether_bot",
	} {
		assert.Contains(t, got, want)
	}
}
