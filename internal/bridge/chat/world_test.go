package chat

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/runner"
)

// TestCLIVersionChangeIsLogged: a turn reporting another CLI version than
// the last (an update in place) is logged once, and a version outside the
// tested range is warned about, as at start-up.
func TestCLIVersionChangeIsLogged(t *testing.T) {
	var logs bytes.Buffer
	b := &Engine{log: zerolog.New(&logs)}
	tested := runner.TestedRange.Min
	b.noteCLIVersion(tested)
	b.noteCLIVersion(tested)
	assert.Empty(t, logs.String(), "a tested version, seen at start, says nothing")
	b.noteCLIVersion("99.0.0")
	b.noteCLIVersion("99.0.0")
	out := logs.String()
	assert.Equal(t, 1, strings.Count(out, "the Claude CLI changed version"), out)
	assert.Equal(t, 1, strings.Count(out, "not tested with"), out)
	assert.Contains(t, out, `"from":"`+tested+`","to":"99.0.0"`)
}
