package runner

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHookMessage(t *testing.T) {
	tests := []struct{ in, want string }{
		{"PreToolUse:Bash hook error: [echo 'no rm here' >&2; exit 2]: no rm here\n", "no rm here"},
		{"PreToolUse:Edit hook error: blocked by policy", "blocked by policy"},
		{"permission denied", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, HookMessage(tt.in), tt.in)
	}
}

// The frame CLI 2.1.328 prints for a failed Stop hook.
func TestStopHookNotification(t *testing.T) {
	n := notificationNotice(&SystemFrame{Subtype: "notification", Key: "stop-hook-error",
		Text: "stop hook reported a problem · ctrl+o to see", Priority: "immediate"})
	assert.Equal(t, Notice{Kind: NoticeInfo, Level: "warning",
		Text: "A Stop hook reported a problem."}, n)
	other := notificationNotice(&SystemFrame{Subtype: "notification", Key: "update-available", Text: "a new version is out"})
	assert.Equal(t, "info", other.Level, "not every notification is a warning")
}
