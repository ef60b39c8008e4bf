package runner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// futureFrames are shapes no CLI release has printed yet, the kinds a newer
// one may add: a new type, a new system subtype, a new content block next to
// a known one, a new stream event, a new CLI → host request, and a known
// frame whose field changed type. The fake CLI prints them for a "FUTURE"
// prompt.
var futureFrames = []string{
	`{"type":"brand_new_type","session_id":"s","payload":{"nested":[1,2,3]}}`,
	`{"type":"system","subtype":"brand_new_subtype","session_id":"s","level":"info"}`,
	`{"type":"assistant","message":{"id":"msg_future","role":"assistant","model":"fake-model","content":[{"type":"future_block","data":"?"},{"type":"text","text":"still readable"}]},"session_id":"s"}`,
	`{"type":"stream_event","event":{"type":"future_event","index":0,"delta":{"type":"future_delta","x":1}},"session_id":"s"}`,
	`{"type":"control_request","request_id":"future-1","request":{"subtype":"future_request","payload":{}}}`,
	`{"type":"system","subtype":"api_retry","attempt":"one","max_retries":3,"session_id":"s"}`,
}

// TestUnknownFramesAreTolerated proves a newer CLI's unknown frames cost
// nothing but a log line: a session that meets them mid-turn keeps what it
// can read (the text block next to an unknown one), reports the rest as
// Unknown events once, answers the unknown request with an error, finishes
// the turn and takes the next one. The decoder-level proof is the
// zz-synthetic-spec-frames replay golden.
func TestUnknownFramesAreTolerated(t *testing.T) {
	s, log := newFakeSession(t, fakeScript{}, nil)
	send(t, s, "FUTURE please")
	ev, i := log.waitFor(t, 0, "turn after future frames", turnDone)
	tc := ev.(TurnCompleted)
	assert.True(t, tc.OK)
	assert.Equal(t, "after future frames", tc.Answer)

	log.mu.Lock()
	var unknown []string
	var texts []string
	for _, ev := range log.events[:i] {
		switch e := ev.(type) {
		case Unknown:
			k := e.Kind
			if e.Err != nil {
				k += " (partly decoded)"
			}
			unknown = append(unknown, k)
		case AssistantText:
			texts = append(texts, e.Text)
		case Warning:
			t.Errorf("a JSON frame became a non-JSON warning: %q", e.Line)
		}
	}
	log.mu.Unlock()
	assert.ElementsMatch(t, []string{"brand_new_type", "system/brand_new_subtype", "assistant/block/future_block",
		"system/api_retry (partly decoded)"}, unknown, "every unknown shape is reported, and only once")
	assert.Contains(t, texts, "still readable", "the known block next to an unknown one still arrives")

	send(t, s, "and after that?")
	ev, _ = log.waitFor(t, i+1, "next turn", turnDone)
	require.Equal(t, "echo: and after that?", ev.(TurnCompleted).Answer, "the process took the next message")
}

// printFutureFrames is the fake CLI's side of TestUnknownFramesAreTolerated.
func printFutureFrames() {
	fmt.Println(strings.Join(futureFrames, "\n"))
}
