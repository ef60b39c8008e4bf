package login

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/runner"
)

// TestLoginFailure: which failed turns are the CLI's login's. The first
// is what CLI 2.1.328 answers without credentials (seen); the 401 is the
// shape the render tests use for a refused key.
func TestLoginFailure(t *testing.T) {
	for _, tc := range []struct {
		name string
		tc   runner.TurnCompleted
		want bool
	}{
		{"not logged in", runner.TurnCompleted{TerminalReason: "api_error", Answer: "Not logged in · Please run /login"}, true},
		{"401", runner.TurnCompleted{APIErrorStatus: 401, Answer: `API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}} · Please run /login`}, true},
		{"typed", runner.TurnCompleted{APIError: "authentication_failed"}, true},
		{"expired token", runner.TurnCompleted{Answer: "OAuth token has expired. Please obtain a new token or refresh your existing token."}, true},
		{"overloaded", runner.TurnCompleted{APIErrorStatus: 529, Answer: "API Error: 529 overloaded"}, false},
		{"an answer that talks about logins", runner.TurnCompleted{OK: true, Answer: "You are not logged in to the VPN; please run /login there."}, false},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, loginFailure(tc.tc)) })
	}
}

// TestAuthText: what /status says of each answer.
func TestAuthText(t *testing.T) {
	now := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	max := runner.Auth{LoggedIn: true, Method: runner.AuthClaudeAI, SubscriptionType: "max"}
	soon, past, far := max, max, max
	soon.ExpiresAt, past.ExpiresAt, far.ExpiresAt = now.Add(5*time.Hour), now.Add(-time.Hour), now.Add(30*24*time.Hour)
	for _, tc := range []struct {
		e    authEntry
		want string
	}{
		{authEntry{auth: runner.Auth{Method: runner.AuthNone}}, "❌ not logged in; /login in a private chat with the bot signs Claude Code in"},
		{authEntry{auth: runner.Auth{LoggedIn: true, Method: runner.AuthAPIKey, APIKeySource: "ANTHROPIC_API_KEY"}}, "an API key (ANTHROPIC_API_KEY)"},
		{authEntry{auth: soon}, "⚠️ a Claude Max subscription (claude.ai login), but its sign-in ends by 13:00 UTC (in 5h00m); /login signs in again"},
		{authEntry{auth: past}, "⚠️ a Claude Max subscription (claude.ai login), but its sign-in may have ended (by 07:00 UTC); /login signs in again"},
		{authEntry{auth: far}, "a Claude Max subscription (claude.ai login); its sign-in ends by 1 Jan 2027 08:00 UTC"},
		{authEntry{err: errors.New("claude auth status gave no answer")}, "unknown: claude auth status gave no answer"},
	} {
		assert.Equal(t, tc.want, authText(tc.e, now, time.UTC))
	}
}
