package runner

import (
	"fmt"
	"regexp"
)

// Session ids and model names are the two values from outside the config
// that become CLI arguments: an id comes from a system/init frame, the state
// database or a Resume button, a model from /model. Each is accepted only in
// a strict form, so neither can ever be read as a flag (an id like
// "--dangerously-skip-permissions" after a bare --resume was one) nor carry
// anything a shell would act on; and each is passed glued to its flag
// (--resume=<id>), so even the CLI's parser cannot take it for another.

// sessionIDRe is a canonical UUID: 8-4-4-4-12 lowercase hex digits, the form
// the CLI writes in its frames and session files, and NewSessionID makes.
var sessionIDRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// ParseSessionID returns s as a SessionID if it is a canonical UUID, else
// an error wrapping ErrInvalidInput.
func ParseSessionID(s string) (SessionID, error) {
	if !sessionIDRe.MatchString(s) {
		return "", fmt.Errorf("%w: session id %.80q is not a UUID", ErrInvalidInput, s)
	}
	return SessionID(s), nil
}

// Valid reports whether id is a canonical UUID, the only form untether
// passes to the CLI.
func (id SessionID) Valid() bool { return sessionIDRe.MatchString(string(id)) }

// MaxModelLen bounds a model name; the longest real ones (Bedrock inference
// profile ARNs) are about 120 characters.
const MaxModelLen = 200

// modelRe is what a model name may look like: an alias (sonnet), an id
// (claude-opus-4-5, claude-sonnet-4-5[1m]), a Bedrock id or ARN
// (us.anthropic.claude-sonnet-4-5-v1:0, arn:aws:bedrock:…/…) or a Vertex id
// (claude-sonnet-4-5@20250929): letters, digits and . _ - : / @ [ ],
// starting with a letter or digit.
var modelRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@\[\]-]*$`)

// ModelRule says in words what CheckModel accepts.
const ModelRule = "a model name is letters, digits and . _ - : / @ [ ], starting with a letter or digit, e.g. sonnet, claude-opus-4-5 or claude-sonnet-4-5[1m]"

// CheckModel reports a model name that is not one untether passes to the
// CLI (an error wrapping ErrInvalidInput, saying ModelRule). "" is the CLI's
// own default and is accepted.
func CheckModel(model string) error {
	if model == "" {
		return nil
	}
	if len(model) > MaxModelLen || !modelRe.MatchString(model) {
		return fmt.Errorf("%w: model %.80q: %s", ErrInvalidInput, model, ModelRule)
	}
	return nil
}

// frameSessionID is the session id a frame names, for an event: "" unless
// it is a canonical UUID, so a consumer never stores, shows or resumes
// anything else.
func frameSessionID(s string) SessionID {
	id, err := ParseSessionID(s)
	if err != nil {
		return ""
	}
	return id
}
