package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// `claude auth status` (CLI 2.1.328) prints one JSON object on stdout and
// exits 0 when logged in, 1 when not. --json is the default and --text the
// alternative; there are no other flags. What is known of the object, and
// how (see auth_test.go, which runs the real CLI for every shape marked
// verified):
//
//	loggedIn        bool    verified (false with no credentials, true otherwise)
//	authMethod      string  verified: "none", "api_key" (ANTHROPIC_API_KEY),
//	                        "oauth_token" (CLAUDE_CODE_OAUTH_TOKEN), "claude.ai"
//	                        (a stored `claude auth login`); inferred from the
//	                        CLI's code: "api_key_helper", "third_party"
//	                        (Bedrock, Vertex, …)
//	apiProvider     string  verified "firstParty"; others inferred
//	apiKeySource    string  verified "ANTHROPIC_API_KEY", only for api_key
//	loginExpiresAt  string  verified: ISO 8601 (…Z) for a stored claude.ai
//	                        login, from its refresh token's end; null otherwise.
//	                        The CLI says the sign-in ends "between" three days
//	                        before it and it, so it is the latest end. A past
//	                        one still says loggedIn: true (verified).
//	subscriptionType, planTier  verified for claude.ai ("max", "max_5x", "pro")
//	email, orgId, orgName       present for claude.ai (verified, null when the
//	                            stored login carries no profile); their values
//	                            for a real login are inferred
//
// Unknown fields are ignored, so a newer CLI adding some changes nothing.
//
// Note that with a stored claude.ai login the command itself reaches the
// network (it looks up api.anthropic.com, verified), so it takes as long as
// that takes: AuthStatusTimeout bounds it.

// AuthStatusTimeout bounds one `claude auth status` run, whatever the
// caller's context allows.
const AuthStatusTimeout = 20 * time.Second

// AuthMethod is how the CLI authenticates, as `claude auth status` names it.
type AuthMethod string

// The methods the CLI names; it may name others.
const (
	AuthNone         AuthMethod = "none"
	AuthAPIKey       AuthMethod = "api_key"
	AuthClaudeAI     AuthMethod = "claude.ai"
	AuthOAuthToken   AuthMethod = "oauth_token"
	AuthAPIKeyHelper AuthMethod = "api_key_helper"
	AuthThirdParty   AuthMethod = "third_party"
)

// Auth is what `claude auth status` says about the CLI's login.
type Auth struct {
	LoggedIn bool
	Method   AuthMethod
	// APIProvider is "firstParty" (Anthropic) or a third party's name.
	APIProvider string
	// APIKeySource names where an API key comes from, e.g.
	// "ANTHROPIC_API_KEY".
	APIKeySource string
	// ExpiresAt is the latest moment a stored claude.ai sign-in ends (the
	// CLI's loginExpiresAt); zero when the CLI names none (API keys, tokens
	// from the environment, or a login without a known end).
	ExpiresAt time.Time
	// Of a claude.ai login; empty when the CLI does not say.
	Email, OrgName, SubscriptionType, PlanTier string
}

// ErrAuthStatus means `claude auth status` did not say whether the CLI is
// logged in: it failed to run, timed out, or printed no status.
var ErrAuthStatus = errors.New("claude auth status gave no answer")

// AuthStatus runs `binary auth status` with env as the CLI's whole
// environment ("KEY=value", as BuildEnv returns; none means
// BuildEnv(os.Environ(), nil), never the daemon's whole environment) and
// reports the CLI's login. Not being logged in is an answer, not an error.
// Errors match ErrAuthStatus.
func AuthStatus(ctx context.Context, binary string, env ...string) (Auth, error) {
	path, err := exec.LookPath(binary)
	if err != nil {
		return Auth{}, fmt.Errorf("%w: find claude binary %q: %w", ErrAuthStatus, binary, err)
	}
	if len(env) == 0 {
		env = BuildEnv(os.Environ(), nil)
	}
	ctx, cancel := context.WithTimeout(ctx, AuthStatusTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, "auth", "status", "--json")
	cmd.Env, cmd.Stdout, cmd.Stderr = env, &stdout, &stderr
	cmd.WaitDelay = 2 * time.Second // a child holding the pipes after a kill
	// Through startOwned, so the orphan reaper never reaps it under Wait.
	if err := startOwned(cmd); err != nil {
		return Auth{}, fmt.Errorf("%w: run %s auth status: %w", ErrAuthStatus, path, err)
	}
	runErr := waitOwned(cmd)
	if ctx.Err() != nil {
		return Auth{}, fmt.Errorf("%w: %s auth status: %w", ErrAuthStatus, path, ctx.Err())
	}
	a, perr := parseAuthStatus(stdout.Bytes())
	if perr == nil {
		// Exit 1 with a status is "not logged in": the JSON is the answer.
		return a, nil
	}
	if runErr != nil {
		return Auth{}, fmt.Errorf("%w: %s auth status: %w: %s", ErrAuthStatus, path, runErr, snippet(stderr.String()))
	}
	return Auth{}, fmt.Errorf("%w: %s auth status: %w", ErrAuthStatus, path, perr)
}

// authStatusJSON is the part of the status untether reads.
type authStatusJSON struct {
	LoggedIn         *bool           `json:"loggedIn"`
	AuthMethod       string          `json:"authMethod"`
	APIProvider      string          `json:"apiProvider"`
	APIKeySource     string          `json:"apiKeySource"`
	LoginExpiresAt   json.RawMessage `json:"loginExpiresAt"`
	Email            *string         `json:"email"`
	OrgName          *string         `json:"orgName"`
	SubscriptionType *string         `json:"subscriptionType"`
	PlanTier         *string         `json:"planTier"`
}

// parseAuthStatus reads the status object from out, skipping anything
// printed before it (a warning on stdout must not hide the answer).
func parseAuthStatus(out []byte) (Auth, error) {
	start := bytes.IndexByte(out, '{')
	if start < 0 {
		return Auth{}, fmt.Errorf("no JSON object in %q", snippet(string(out)))
	}
	var j authStatusJSON
	if err := json.NewDecoder(bytes.NewReader(out[start:])).Decode(&j); err != nil {
		return Auth{}, fmt.Errorf("decode the status %q: %w", snippet(string(out[start:])), err)
	}
	if j.LoggedIn == nil {
		return Auth{}, fmt.Errorf("the status %q has no loggedIn", snippet(string(out[start:])))
	}
	a := Auth{
		LoggedIn: *j.LoggedIn, Method: AuthMethod(j.AuthMethod), APIProvider: j.APIProvider,
		APIKeySource: j.APIKeySource, ExpiresAt: parseExpiry(j.LoginExpiresAt),
		Email: deref(j.Email), OrgName: deref(j.OrgName), SubscriptionType: deref(j.SubscriptionType), PlanTier: deref(j.PlanTier),
	}
	if a.Method == "" {
		a.Method = AuthNone
		if a.LoggedIn {
			a.Method = "unknown"
		}
	}
	return a, nil
}

// parseExpiry reads loginExpiresAt: an ISO 8601 string (verified) or, to be
// tolerant of a change, milliseconds since the epoch. Anything else, null
// included, is "no known end".
func parseExpiry(raw json.RawMessage) time.Time {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t
		}
		return time.Time{}
	}
	var ms int64
	if json.Unmarshal(raw, &ms) == nil && ms > 0 {
		return time.UnixMilli(ms)
	}
	return time.Time{}
}

// snippet bounds text quoted in an error.
func snippet(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// Expired reports whether a known end of the sign-in has passed at now (the
// CLI then still says loggedIn, but requests are refused).
func (a Auth) Expired(now time.Time) bool {
	return !a.ExpiresAt.IsZero() && !now.Before(a.ExpiresAt)
}

// ExpiresWithin reports whether a known end of the sign-in comes within d
// of now (or has passed).
func (a Auth) ExpiresWithin(now time.Time, d time.Duration) bool {
	return !a.ExpiresAt.IsZero() && a.ExpiresAt.Sub(now) < d
}

// Describe says how the CLI is logged in, for a person: "a Claude Max
// subscription (claude.ai login as a@b.c)", "an API key (ANTHROPIC_API_KEY)".
// It says nothing about whether the login works.
func (a Auth) Describe() string {
	switch a.Method {
	case AuthNone:
		return "no login"
	case AuthAPIKey:
		if a.APIKeySource != "" {
			return "an API key (" + a.APIKeySource + ")"
		}
		return "an API key"
	case AuthClaudeAI:
		what := "a claude.ai account"
		if a.SubscriptionType != "" {
			what = "a Claude " + capitalize(a.SubscriptionType) + " subscription"
		}
		login := "claude.ai login"
		if a.Email != "" {
			login += " as " + a.Email
		}
		if a.OrgName != "" {
			login += ", " + a.OrgName
		}
		return what + " (" + login + ")"
	case AuthOAuthToken:
		return "an OAuth token given to the CLI (such as CLAUDE_CODE_OAUTH_TOKEN from `claude setup-token`)"
	case AuthAPIKeyHelper:
		return "an apiKeyHelper command"
	case AuthThirdParty:
		if a.APIProvider != "" {
			return "a third-party provider (" + a.APIProvider + ")"
		}
		return "a third-party provider"
	}
	return fmt.Sprintf("a way untether does not know (%q)", string(a.Method))
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
