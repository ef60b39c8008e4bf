package login

import (
	"regexp"
	"strings"
	"sync"
)

// Redacted stands in for a secret in every message, error and log line.
const Redacted = "[redacted]"

// tokenRe matches what looks like a credential: Anthropic's keys and tokens
// (sk-ant-api03-…, sk-ant-oat01-…, sk-ant-ort01-…) and any long opaque run
// of the characters tokens, codes and PKCE values are made of. It is applied
// to all text that leaves a session except the authorization URL itself,
// which the user must see whole.
var tokenRe = regexp.MustCompile(`sk-ant-[A-Za-z0-9]+-[A-Za-z0-9_\-]+|[A-Za-z0-9_\-]{32,}(#[A-Za-z0-9_\-]+)?`)

// accessTokenRe finds the token `claude setup-token` prints (inferred from
// its text: "Your OAuth token (valid for 1 year):" and then the token, an
// sk-ant-oat01- value like CLAUDE_CODE_OAUTH_TOKEN takes).
var accessTokenRe = regexp.MustCompile(`sk-ant-oat[0-9]+-[A-Za-z0-9_\-]{16,}`)

// redactor blanks out the secrets a session has seen (the codes it sent,
// the token it read) and anything shaped like a token.
type redactor struct {
	mu      sync.Mutex
	secrets []string
}

// add records a secret, and the parts of it a program might echo alone (a
// pasted code is "code#state").
func (r *redactor) add(secret string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range append([]string{secret}, strings.Split(secret, "#")...) {
		if len(s) >= 4 {
			r.secrets = append(r.secrets, s)
		}
	}
}

// redact returns s with every secret replaced by Redacted.
func (r *redactor) redact(s string) string {
	r.mu.Lock()
	secrets := r.secrets
	r.mu.Unlock()
	for _, secret := range secrets {
		s = strings.ReplaceAll(s, secret, Redacted)
	}
	return tokenRe.ReplaceAllString(s, Redacted)
}
