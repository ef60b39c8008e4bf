package runner

import "time"

// LastOutput is when the CLI last printed a line, any line: heartbeats
// (tool_progress) and other quiet frames included, though they become no
// event. Zero before the first line. A host uses it to tell a turn that is
// working quietly from one that printed nothing for a long time.
//
// The time carries a monotonic reading, so time.Since(LastOutput()) stays
// true when the wall clock jumps.
func (s *Session) LastOutput() time.Time {
	n := s.lastOutput.Load()
	if n == 0 {
		return time.Time{}
	}
	return monoBase.Add(time.Duration(n))
}

// monoBase anchors instants stored as integers: a time.Time derived from
// it by Add keeps its monotonic clock reading (a time.Unix value has none,
// and comparing it with time.Now() would follow wall-clock jumps).
var monoBase = time.Now()

// monoNow is now as nanoseconds after monoBase; never 0, which means unset.
func monoNow() int64 { return max(int64(time.Since(monoBase)), 1) }
