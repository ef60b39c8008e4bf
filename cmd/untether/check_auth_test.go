package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/runner"
)

// TestAuthFinding: what check says of each login, at a fixed moment. (The
// real CLI's answers are in TestCheck's claude-* goldens.)
func TestAuthFinding(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	max := func(end time.Time) runner.Auth {
		return runner.Auth{LoggedIn: true, Method: runner.AuthClaudeAI, SubscriptionType: "max", ExpiresAt: end}
	}
	cases := []struct {
		name      string
		auth      runner.Auth
		wantLevel string
		wantMsg   string
	}{
		{"not logged in", runner.Auth{Method: runner.AuthNone}, "warn",
			"claude is not logged in, so every turn will fail: " + loginHint},
		{"api key", runner.Auth{LoggedIn: true, Method: runner.AuthAPIKey, APIKeySource: "ANTHROPIC_API_KEY"}, "ok",
			"claude is logged in with an API key (ANTHROPIC_API_KEY)"},
		{"claude.ai, ends in a month", max(now.Add(30 * 24 * time.Hour)), "ok",
			"claude is logged in with a Claude Max subscription (claude.ai login); its sign-in ends by 2026-12-31 12:00 UTC"},
		{"claude.ai, ends in a day and a minute", max(now.Add(24*time.Hour + time.Minute)), "ok",
			"claude is logged in with a Claude Max subscription (claude.ai login); its sign-in ends by 2026-12-02 12:01 UTC"},
		{"claude.ai, ends within a day", max(now.Add(23 * time.Hour)), "warn",
			"claude is logged in with a Claude Max subscription (claude.ai login), but its sign-in ends within a day (by 2026-12-02 11:00 UTC): " +
				loginHint + ", or use `claude setup-token` for a token that lasts a year"},
		{"claude.ai, ended", max(now.Add(-time.Hour)), "warn",
			"claude is logged in with a Claude Max subscription (claude.ai login), but its sign-in may have ended (by 2026-12-01 11:00 UTC): " + loginHint},
	}
	for _, tc := range cases {
		level, msg := authFinding(tc.auth, now)
		assert.Equal(t, tc.wantLevel, level, tc.name)
		assert.Equal(t, tc.wantMsg, msg, tc.name)
	}
}
