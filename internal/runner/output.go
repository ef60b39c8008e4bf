package runner

import "time"

// LastOutput is when the CLI last printed a line, any line: heartbeats
// (tool_progress) and other quiet frames included, though they become no
// event. Zero before the first line. A host uses it to tell a turn that is
// working quietly from one that printed nothing for a long time.
func (s *Session) LastOutput() time.Time {
	n := s.lastOutput.Load()
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}
