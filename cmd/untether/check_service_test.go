package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/telegramtest"
)

// TestCheckService: check reports what http.listen exposes, warns about
// triggers nothing can reach, and refuses a trigger for a chat untether
// does not serve.
func TestCheckService(t *testing.T) {
	tg := telegramtest.New(t)
	const trigger = "\n[[triggers]]\nname = \"ci\"\nsecret = \"0123456789abcdef\"\nchat_id = %d\nprompt = \"CI: {{.workflow_run.html_url}}\"\n"
	tables := func(s string) func(c *daemonConfig, _ string) {
		return func(c *daemonConfig, _ string) { c.Tables = s }
	}
	cases := []checkCase{
		{name: "http-loopback", wantCode: exitOK, edit: tables("\n[http]\nlisten = \"127.0.0.1:9464\"\n" + fmt.Sprintf(trigger, int64(alice)))},
		{name: "http-every-interface", wantCode: exitOK, edit: tables("\n[http]\nlisten = \":9464\"\n")},
		{name: "http-not-loopback", wantCode: exitOK, edit: tables("\n[http]\nlisten = \"192.0.2.10:9464\"\n")},
		{name: "triggers-without-listener", wantCode: exitOK, edit: tables(fmt.Sprintf(trigger, int64(alice)))},
		{name: "trigger-chat-not-allowed", wantCode: exitConfig, edit: tables("\n[http]\nlisten = \"127.0.0.1:9464\"\n" + fmt.Sprintf(trigger, -100999))},
		{name: "http-listen-invalid", wantCode: exitConfig, edit: tables("\n[http]\nlisten = \"9464\"\n")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, code := runCheckCase(t, tg, tc)
			assert.Equal(t, tc.wantCode, code, "exit code; output:\n%s", got)
			assert.NotContains(t, got, "0123456789abcdef", "check never prints a trigger's secret")
			golden(t, filepath.Join("check", tc.name+".golden"), got)
		})
	}
}

func TestListenLoopback(t *testing.T) {
	ctx := context.Background()
	for addr, want := range map[string]bool{
		"127.0.0.1:9464": true, "[::1]:9464": true, "localhost:9464": true,
		// A name, resolved (from /etc/hosts, which the resolver reads
		// case-blind, so no query leaves the machine): loopback only.
		"LOCALHOST:9464": true,
		":9464":          false, "0.0.0.0:9464": false, "[::]:9464": false, "10.1.2.3:9464": false,
	} {
		assert.Equal(t, want, listenLoopback(ctx, addr), addr)
	}
}
