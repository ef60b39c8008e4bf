package metrics

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLabels(t *testing.T) {
	for in, want := range map[string]string{
		"sendMessage": "sendMessage", "getUpdates": "getUpdates", "": other, "send_message": other,
		"sendMessage2": other, "send Message": other, "sendMessage\n": other, "@[`{": other,
		strings.Repeat("a", 40): strings.Repeat("a", 40), strings.Repeat("a", 41): other, "séndMessage": other,
	} {
		assert.Equal(t, want, methodLabel(in), "method %q", in)
	}
	for in, want := range map[int]string{0: "network", 200: "200", 429: "429", 599: "599", 99: other, 600: other, -1: other} {
		assert.Equal(t, want, statusLabel(in), "status %d", in)
	}
	for in, want := range map[string]string{"outbox": "outbox", "cli_proc": "cli_proc", "Outbox": other, "": other, "a b": other} {
		assert.Equal(t, want, writeKindLabel(in), "kind %q", in)
	}
	for in, want := range map[string]string{"2.1.328": "2.1.328", "2.1.328 (Claude Code)": "unknown", "": "unknown", "v1.0.0-rc.1+build": "v1.0.0-rc.1+build"} {
		assert.Equal(t, want, versionLabel(in), "version %q", in)
	}
}
