package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
)

// TestAuthStatusRealCLI asks the real CLI, offline, in each state this
// machine can put it in: these are the shapes auth.go marks verified.
func TestAuthStatusRealCLI(t *testing.T) {
	now := time.Now()
	soon := now.Add(12 * time.Hour).Truncate(time.Millisecond)
	past := now.Add(-30 * time.Minute).Truncate(time.Millisecond)
	cases := []struct {
		name  string
		opts  []claudetest.Option
		setup func(t *testing.T, env *claudetest.Env) (binary string)
		want  Auth
	}{
		{name: "no credentials", setup: withoutAPIKey,
			want: Auth{LoggedIn: false, Method: AuthNone, APIProvider: "firstParty"}},
		{name: "API key",
			want: Auth{LoggedIn: true, Method: AuthAPIKey, APIProvider: "firstParty", APIKeySource: "ANTHROPIC_API_KEY"}},
		{name: "OAuth token", opts: []claudetest.Option{claudetest.WithOAuthToken("sk-ant-oat01-not-a-real-token")},
			want: Auth{LoggedIn: true, Method: AuthOAuthToken, APIProvider: "firstParty"}},
		{name: "stored claude.ai login ending soon",
			setup: func(t *testing.T, env *claudetest.Env) string {
				return storedLogin(t, env, soon, "max", "default_claude_max_5x")
			},
			want: Auth{LoggedIn: true, Method: AuthClaudeAI, APIProvider: "firstParty", ExpiresAt: soon,
				SubscriptionType: "max", PlanTier: "max_5x"}},
		// The CLI still says logged in once the sign-in has ended.
		{name: "stored claude.ai login past its end",
			setup: func(t *testing.T, env *claudetest.Env) string { return storedLogin(t, env, past, "pro", "") },
			want: Auth{LoggedIn: true, Method: AuthClaudeAI, APIProvider: "firstParty", ExpiresAt: past,
				SubscriptionType: "pro", PlanTier: "pro"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := claudetest.New(t, fakeapi.Script{}, tc.opts...)
			bin := env.Binary
			if tc.setup != nil {
				if b := tc.setup(t, env); b != "" {
					bin = b
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			got, err := AuthStatus(ctx, bin, env.Environ()...)
			require.NoError(t, err)
			assert.True(t, got.ExpiresAt.Equal(tc.want.ExpiresAt), "ExpiresAt %v, want %v", got.ExpiresAt, tc.want.ExpiresAt)
			got.ExpiresAt = tc.want.ExpiresAt // compared above, location aside
			assert.Equal(t, tc.want, got)
		})
	}
}

// withoutAPIKey leaves the CLI no credentials at all.
func withoutAPIKey(_ *testing.T, env *claudetest.Env) string {
	delete(env.Vars, "ANTHROPIC_API_KEY")
	return ""
}

// storedLogin writes a claude.ai login the way `claude auth login` stores
// one on Linux (~/.claude/.credentials.json, the fields read from the CLI's
// code), with made-up tokens whose refresh token ends at end, and returns
// the CLI wrapped without a network: with such a login `claude auth status`
// looks up api.anthropic.com.
func storedLogin(t *testing.T, env *claudetest.Env, end time.Time, subscription, tier string) string {
	withoutAPIKey(t, env)
	dir := filepath.Join(env.Home, ".claude")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	tierField := ""
	if tier != "" {
		tierField = fmt.Sprintf(`,"rateLimitTier":%q`, tier)
	}
	creds := fmt.Sprintf(`{"claudeAiOauth":{"accessToken":"sk-ant-oat01-fake-access","refreshToken":"sk-ant-ort01-fake-refresh",`+
		`"expiresAt":%d,"refreshTokenExpiresAt":%d,"scopes":["user:inference","user:profile","user:sessions:claude_code"],"subscriptionType":%q%s}}`,
		end.Add(-time.Hour).UnixMilli(), end.UnixMilli(), subscription, tierField)
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".credentials.json"), []byte(creds), 0o600))
	return claudetest.NoNetwork(t, env.Binary)
}

// TestParseAuthStatus reads every known shape of the status. Verified
// fixtures are the real CLI's output (2.1.328, paths rewritten); inferred
// ones are built from the fields the CLI's code writes.
func TestParseAuthStatus(t *testing.T) {
	cases := []struct {
		file     string
		verified bool
		want     Auth
		describe string
	}{
		{"none.json", true, Auth{Method: AuthNone, APIProvider: "firstParty"}, "no login"},
		{"api-key.json", true, Auth{LoggedIn: true, Method: AuthAPIKey, APIProvider: "firstParty", APIKeySource: "ANTHROPIC_API_KEY"},
			"an API key (ANTHROPIC_API_KEY)"},
		{"oauth-token.json", true, Auth{LoggedIn: true, Method: AuthOAuthToken, APIProvider: "firstParty"},
			"an OAuth token given to the CLI (such as CLAUDE_CODE_OAUTH_TOKEN from `claude setup-token`)"},
		{"claude-ai.json", true, Auth{LoggedIn: true, Method: AuthClaudeAI, APIProvider: "firstParty",
			ExpiresAt: time.Date(2026, 12, 2, 7, 33, 58, 419e6, time.UTC), SubscriptionType: "max", PlanTier: "max_5x"},
			"a Claude Max subscription (claude.ai login)"},
		{"claude-ai-profile.json", false, Auth{LoggedIn: true, Method: AuthClaudeAI, APIProvider: "firstParty",
			ExpiresAt: time.Date(2027, 3, 1, 10, 0, 0, 0, time.UTC), Email: "dev@example.com", OrgName: "Example Org",
			SubscriptionType: "pro", PlanTier: "pro"},
			"a Claude Pro subscription (claude.ai login as dev@example.com, Example Org)"},
		{"api-key-helper.json", false, Auth{LoggedIn: true, Method: AuthAPIKeyHelper, APIProvider: "firstParty", APIKeySource: "apiKeyHelper"},
			"an apiKeyHelper command"},
		{"third-party.json", false, Auth{LoggedIn: true, Method: AuthThirdParty, APIProvider: "bedrock"},
			"a third-party provider (bedrock)"},
		// A later CLI: text before the object, an unknown method and
		// field, the end in milliseconds.
		{"future.txt", false, Auth{LoggedIn: true, Method: "passkey", APIProvider: "firstParty",
			ExpiresAt: time.UnixMilli(1798761600000), SubscriptionType: "max"},
			`a way untether does not know ("passkey")`},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "auth-status", tc.file))
			require.NoError(t, err)
			got, err := parseAuthStatus(raw)
			require.NoError(t, err)
			assert.True(t, got.ExpiresAt.Equal(tc.want.ExpiresAt), "ExpiresAt %v, want %v", got.ExpiresAt, tc.want.ExpiresAt)
			got.ExpiresAt = tc.want.ExpiresAt
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.describe, got.Describe())
		})
	}
	for _, bad := range []string{"", "Not logged in. Run claude auth login to authenticate.", `{"authMethod":"none"}`, `{"loggedIn":`} {
		_, err := parseAuthStatus([]byte(bad))
		assert.Error(t, err, "%q is no status", bad)
	}
}

func TestAuthExpiry(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		end                 time.Time
		expired, withinADay bool
	}{
		{time.Time{}, false, false},
		{now.Add(48 * time.Hour), false, false},
		{now.Add(24 * time.Hour), false, false},
		{now.Add(23 * time.Hour), false, true},
		{now.Add(time.Minute), false, true},
		{now, true, true},
		{now.Add(-time.Hour), true, true},
	}
	for _, tc := range cases {
		a := Auth{LoggedIn: true, Method: AuthClaudeAI, ExpiresAt: tc.end}
		assert.Equal(t, tc.expired, a.Expired(now), "Expired, end %v", tc.end)
		assert.Equal(t, tc.withinADay, a.ExpiresWithin(now, 24*time.Hour), "ExpiresWithin, end %v", tc.end)
	}
}

// TestAuthStatusFailures: every way the command gives no answer is an
// ErrAuthStatus naming what happened, and a hanging CLI is cut off.
func TestAuthStatusFailures(t *testing.T) {
	dir := t.TempDir()
	stub := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
		return p
	}
	cases := []struct {
		name, binary, want string
		timeout            time.Duration
	}{
		{name: "missing binary", binary: filepath.Join(dir, "nope"), want: "find claude binary"},
		{name: "no auth command", binary: stub("old", `echo "error: unknown command 'auth'" >&2; exit 1`), want: "unknown command 'auth'"},
		{name: "not JSON", binary: stub("text", `echo "Not logged in."; exit 0`), want: "no JSON object"},
		{name: "hangs", binary: stub("hang", `exec sleep 60`), timeout: 300 * time.Millisecond, want: "deadline exceeded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			start := time.Now()
			_, err := AuthStatus(ctx, tc.binary, "PATH="+os.Getenv("PATH"))
			require.ErrorIs(t, err, ErrAuthStatus)
			assert.Contains(t, err.Error(), tc.want)
			assert.Less(t, time.Since(start), 10*time.Second, "a hanging CLI is killed at the deadline")
		})
	}
}

// TestAuthStatusDefaultEnv: without an env the CLI gets the allow-listed
// part of the daemon's environment, never the bot token.
func TestAuthStatusDefaultEnv(t *testing.T) {
	t.Setenv("UNTETHER_TELEGRAM_BOT_TOKEN", "123:secret")
	t.Setenv("LANG", "C.UTF-8")
	p := filepath.Join(t.TempDir(), "claude")
	// The stub reports what it sees in fields untether reads.
	script := `#!/bin/sh
printf '{"loggedIn":false,"authMethod":"none","apiKeySource":"%s","email":"%s","orgName":"%s"}\n' "$UNTETHER_TELEGRAM_BOT_TOKEN" "$LANG" "$*"
exit 1
`
	require.NoError(t, os.WriteFile(p, []byte(script), 0o755))
	got, err := AuthStatus(context.Background(), p)
	require.NoError(t, err, "exit 1 with a status is an answer")
	assert.Empty(t, got.APIKeySource, "the bot token never reaches the CLI")
	assert.Equal(t, "C.UTF-8", got.Email, "allow-listed variables do")
	assert.Equal(t, "auth status --json", got.OrgName, "the command line")
	assert.False(t, slices.Contains(strings.Fields(got.OrgName), "-p"))
}
