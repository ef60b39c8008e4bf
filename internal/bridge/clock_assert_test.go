package bridge_test

import (
	"strings"
	"testing"
	"time"
)

// assertRenderedBetween checks that text holds what render(now) gives for a
// clock reading the code could have used: one between before (read before
// the input that made text) and after (read once text arrived). A rendered
// time or countdown changes at most once a minute and only forwards, so
// every reading in a span shorter than that renders as one of its two ends;
// the assertion holds whatever the milliseconds the test took, and fails on
// a wrong text.
func assertRenderedBetween(t *testing.T, text string, before, after time.Time, render func(now time.Time) string) {
	t.Helper()
	if after.Sub(before) >= time.Minute {
		t.Fatalf("the span %s–%s is a minute or more: a rendered minute could take any value in it", before, after)
	}
	early, late := render(before), render(after)
	if !strings.Contains(text, early) && !strings.Contains(text, late) {
		t.Errorf("%q holds neither %q (rendered at %s) nor %q (at %s)", text, early, before.Format(time.RFC3339Nano), late, after.Format(time.RFC3339Nano))
	}
}
