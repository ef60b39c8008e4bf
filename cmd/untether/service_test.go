package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner"
	"github.com/untether/untether/internal/service/webhook"
	"github.com/untether/untether/internal/telegramtest"
)

// freeAddr is a loopback address with a port nobody listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// withHTTP turns the daemon's listener on at a free loopback address,
// with the triggers given as TOML, and returns the listener's URL.
func (d *daemon) withHTTP(triggers string) string {
	addr := freeAddr(d.t)
	d.cfg.Tables += fmt.Sprintf("\n[http]\nlisten = %q\n%s", addr, triggers)
	return "http://" + addr
}

// httpDo makes req and returns the answer's status, headers and body.
func httpDo(t *testing.T, req *http.Request) (int, http.Header, string) {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, string(b)
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	code, _, body := httpDo(t, req)
	return code, body
}

// deliver posts body to trigger name as GitHub does, signed with secret.
func deliver(t *testing.T, url, name, event, secret string, body []byte) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/hooks/"+name, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if event != "" {
		req.Header.Set(webhook.EventHeader, event)
	}
	req.Header.Set(webhook.SignatureHeader, webhook.Sign(secret, body))
	return httpDo(t, req)
}

// ping sends GitHub's ping for trigger name, signed with secret.
func ping(t *testing.T, url, name, secret string) (int, string) {
	t.Helper()
	code, _, body := deliver(t, url, name, "ping", secret, []byte(`{"zen":"Keep it logically awesome.","hook_id":1}`))
	return code, body
}

const (
	hookSecret  = "first-secret-0123456789"
	hook2Secret = "second-secret-0123456789"
)

// TestServiceLifecycle: with [http] listen set, the daemon serves before
// it polls (/readyz and /healthz say why they are not 200 yet), is ready
// and healthy once a getUpdates succeeded, exposes its build and the
// probed CLI version in /metrics, takes a trigger added to the file on
// SIGHUP (its secret too), and stops cleanly.
func TestServiceLifecycle(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	url := d.withHTTP(fmt.Sprintf("\n[[triggers]]\nname = \"first\"\nsecret = %q\nchat_id = %d\nprompt = \"p\"\n", hookSecret, alice))
	d.tg.Delay("getUpdates", 3*time.Second) // the first polls hang a while
	p := d.start()
	served := p.waitLog("the listener", msgIs("serving /metrics, /healthz, /readyz and /hooks/ over HTTP"))
	assert.Equal(t, strings.TrimPrefix(url, "http://"), served.str("addr"))

	code, body := httpGet(t, url+"/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "not ready: no getUpdates call has succeeded yet\n", body)
	code, body = httpGet(t, url+"/healthz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "unhealthy: no getUpdates poll has completed yet\n", body)

	d.tg.Delay("getUpdates", 0)
	d.waitReady(p)
	code, body = httpGet(t, url+"/readyz")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ready\n", body)
	code, body = httpGet(t, url+"/healthz")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok\n", body)
	_, metrics := httpGet(t, url+"/metrics")
	assert.Contains(t, metrics, `untether_build_info{commit="`+testCommit+`",go_version=`)
	assert.Contains(t, metrics, `version="`+testVersion+`"} 1`)
	assert.Contains(t, metrics, `untether_claude_cli_info{version="`+runner.TestedVersion+`"} 1`)
	assert.Contains(t, metrics, `untether_telegram_api_calls_total{method="getUpdates",status="200"}`)

	code, _ = ping(t, url, "first", hookSecret)
	assert.Equal(t, http.StatusOK, code, "the configured trigger")
	code, _ = ping(t, url, "second", hook2Secret)
	assert.Equal(t, http.StatusNotFound, code, "not yet configured")

	d.cfg.Tables += fmt.Sprintf("\n[[triggers]]\nname = \"second\"\nsecret_env = \"UNTETHER_TEST_HOOK\"\nchat_id = %d\nprompt = \"q\"\n", alice)
	d.writeConfig()
	// UNTETHER_TEST_HOOK is not in the daemon's environment: the reload is refused.
	p.signal(syscall.SIGHUP)
	p.waitLog("the refused reload", msgIs("reload: keeping the running configuration"))
	code, _ = ping(t, url, "second", hook2Secret)
	assert.Equal(t, http.StatusNotFound, code, "a refused reload changes nothing")

	d.cfg.Tables = strings.Replace(d.cfg.Tables, `secret_env = "UNTETHER_TEST_HOOK"`, fmt.Sprintf("secret = %q", hook2Secret), 1)
	d.writeConfig()
	p.signal(syscall.SIGHUP)
	reloaded := p.waitLog("the reload", msgIs("configuration reloaded"))
	assert.Equal(t, []string{"triggers"}, reloaded.strs("applied"))
	code, body = ping(t, url, "second", hook2Secret)
	assert.Equal(t, http.StatusOK, code, body)
	code, _ = ping(t, url, "second", "wrong-secret-0123456789")
	assert.Equal(t, http.StatusUnauthorized, code)
	assert.NotContains(t, p.stderr.String(), hook2Secret, "a trigger's secret is never logged")

	p.signal(syscall.SIGTERM)
	require.Equal(t, exitOK, p.waitExit())
	_, err := (&http.Client{Timeout: time.Second}).Get(url + "/readyz")
	assert.Error(t, err, "the listener is closed once the daemon stopped")
}

// TestServiceDuringDrain: from SIGTERM on, /readyz says the daemon is
// draining (503) and a webhook delivery gets 503 with Retry-After, while
// /healthz stays 200 and the running turn finishes.
func TestServiceDuringDrain(t *testing.T) {
	t.Parallel()
	d := newDaemon(t)
	d.withClaude()
	url := d.withHTTP(fmt.Sprintf("\n[[triggers]]\nname = \"ci\"\nsecret = %q\nchat_id = %d\nprompt = \"{{.text}}\"\n", hookSecret, alice))
	p := d.start()
	d.waitReady(p)
	in := d.say(alice, "SLOWDRAIN please")
	d.waitBot(telegramtest.ChatID(alice), "the slow turn's progress", func(m telegramtest.Message) bool { return m.ButtonData("Cancel") != "" })

	p.signal(syscall.SIGTERM)
	p.waitLog("the drain", func(l logLine) bool { return strings.HasPrefix(l.str("message"), "stopping: finishing running turns") })
	code, body := httpGet(t, url+"/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "not ready: draining for a stop: running turns finish, no new work is taken\n", body)
	code, _ = httpGet(t, url+"/healthz")
	assert.Equal(t, http.StatusOK, code, "draining is not dying")

	code, header, _ := deliver(t, url, "ci", "", hookSecret, []byte(`{"text":"a delivery during the drain"}`))
	assert.Equal(t, http.StatusServiceUnavailable, code)
	retry, err := strconv.Atoi(header.Get("Retry-After"))
	require.NoError(t, err)
	assert.Positive(t, retry)

	d.waitBot(telegramtest.ChatID(alice), "the slow turn's answer", func(m telegramtest.Message) bool {
		return isFinal(m, in.ID) && strings.Contains(m.Text, "THE-END")
	})
	require.Equal(t, exitOK, p.waitExit())
}

// TestServiceAddressTaken: an http.listen the daemon cannot bind stops it
// at start, before it polls Telegram, saying why.
func TestServiceAddressTaken(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	d := newDaemon(t)
	d.cfg.Tables += fmt.Sprintf("\n[http]\nlisten = %q\n", ln.Addr().String())
	p := d.start()
	require.Equal(t, exitRuntime, p.waitExit())
	line := p.waitLog("why", msgIs("cannot serve http.listen"))
	assert.Contains(t, line.str("error"), "address already in use")
	assert.Empty(t, d.tg.Snapshot().CallsOf("getUpdates"), "it never polled")
}
