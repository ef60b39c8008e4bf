package pathglob

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

var defaults = []string{".env*", "*.pem", "*.key", ".ssh/**", ".git/**", ".netrc", ".npmrc", ".pypirc"}

func TestMatch(t *testing.T) {
	tests := []struct {
		rel  string
		deny bool
	}{
		{".env", true},
		{".env.local", true},
		{"config/.env.production", true},
		{".ENV", true},
		{"certs/server.pem", true},
		{"id.key", true},
		{"id.key/inside", true},
		{".ssh", true},
		{".ssh/id_ed25519", true},
		{"home/.ssh/config", true},
		{".git", true},
		{".git/config", true},
		{"vendor/lib/.git/HEAD", true},
		{".netrc", true},
		{"sub/.npmrc", true},
		{".pypirc", true},
		{"README.md", false},
		{"src/env.go", false},
		{"docs/keys.md", false},
		{"environment/.gitignore", false},
		{".github/workflows/ci.yml", false},
		{"notes.pem.txt", false},
		{"", false},
		{".", false},
	}
	for _, tt := range tests {
		_, got := MatchAny(defaults, tt.rel)
		assert.Equal(t, tt.deny, got, "%q", tt.rel)
	}
}

func TestMatchShapes(t *testing.T) {
	tests := []struct {
		pattern, rel string
		want         bool
	}{
		{"/secrets", "secrets/a", true},
		{"/secrets", "x/secrets/a", false},
		{"secrets", "x/secrets/a", true},
		{"config/*.json", "config/prod.json", true},
		{"config/*.json", "app/config/prod.json", true},
		{"config/*.json", "config/sub/prod.json", false},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/x/y/c", false},
		{"[", "anything", true}, // invalid patterns refuse
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Match(tt.pattern, tt.rel), "%q vs %q", tt.pattern, tt.rel)
	}
}

func TestValid(t *testing.T) {
	for _, p := range defaults {
		assert.NoError(t, Valid(p), p)
	}
	for _, p := range []string{"", "/", "a//b", "[", "x/[a-"} {
		assert.Error(t, Valid(p), p)
	}
}
