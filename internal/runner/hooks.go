package runner

import "strings"

// The CLI reports a hook that failed in two ways. A PreToolUse hook that
// blocks (exit code 2) refuses the call: its tool_result is the hook's
// error with its stderr, and tool_result_meta says the decision came from a
// hook (Permission.Source "hook"). A Stop hook that fails gets no tool
// call to hang on; CLI 2.1.328 prints system/notification with the key
// "stop-hook-error" and a text written for its terminal ("… · ctrl+o to
// see"), without the stderr.

// notificationNotice makes a system/notification a Notice. One whose key
// names an error is a warning; others are informational.
func notificationNotice(f *SystemFrame) Notice {
	text := strings.TrimSpace(f.Text)
	// The terminal's own hint leads nowhere in Telegram.
	if i := strings.Index(text, " · ctrl+"); i >= 0 {
		text = strings.TrimSpace(text[:i])
	}
	if f.Key == "stop-hook-error" {
		// The frame carries no stderr: name the failure, nothing more.
		text = "A Stop hook reported a problem."
	}
	level := "info"
	if strings.Contains(f.Key, "error") || strings.Contains(f.Key, "fail") {
		level = "warning"
	}
	return Notice{Kind: NoticeInfo, Level: level, Text: text}
}

// HookMessage is what a blocking hook wrote to stderr, from the tool
// result the CLI makes of it ("PreToolUse:Bash hook error: [command]:
// stderr"); "" if the result is not one.
func HookMessage(result string) string {
	i := strings.Index(result, "hook error: ")
	if i < 0 {
		return ""
	}
	rest := result[i+len("hook error: "):]
	if strings.HasPrefix(rest, "[") {
		if j := strings.Index(rest, "]: "); j >= 0 {
			rest = rest[j+len("]: "):]
		}
	}
	return strings.TrimSpace(rest)
}
