package runner

import (
	"fmt"
	"strings"
)

// managedFlags are the CLI flags the runner sets itself. Letting configuration
// override them would silently break the control channel (no stream-json, no
// can_use_tool requests) or session identity (--resume/--session-id).
var managedFlags = map[string]bool{
	"-p": true, "--print": true,
	"--output-format": true, "--input-format": true,
	"--verbose":                true,
	"--permission-prompt-tool": true,
	"--permission-mode":        true,
	"--model":                  true,
	"--effort":                 true,
	"--session-id":             true,
	"--resume":                 true, "-r": true,
	"--continue": true, "-c": true,
	"--fork-session":                       true,
	"--dangerously-skip-permissions":       true,
	"--allow-dangerously-skip-permissions": true,
	"--replay-user-messages":               true,
	"--include-partial-messages":           true,
	"--input-file":                         true,
	"--max-budget-usd":                     true, // [budget]
}

// CheckExtraArgs reports an error naming every configured extra argument that
// collides with a flag the runner manages. Both "--flag value" and
// "--flag=value" forms are recognised.
func CheckExtraArgs(args []string) error {
	var bad []string
	for _, a := range args {
		name, _, _ := strings.Cut(a, "=")
		if managedFlags[name] {
			bad = append(bad, name)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("extra args must not set flags untether manages: %s", strings.Join(bad, ", "))
	}
	return nil
}
