package runner

import (
	"encoding/json"
	"testing"
)

// benchFrames is every captured stdout line, repeated until there are at
// least 10,000, so the benchmarks see the real mix of frame kinds and sizes.
func benchFrames(b *testing.B) [][]byte {
	b.Helper()
	var once [][]byte
	for _, p := range transcriptPaths(b) {
		once = append(once, transcriptOutLines(b, p)...)
	}
	var frames [][]byte
	for len(frames) < 10000 {
		frames = append(frames, once...)
	}
	return frames
}

func reportPerFrame(b *testing.B, n int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/frame")
}

// BenchmarkDecodeTranslate is the runner's stdout pipeline per line: type
// peek, typed decode and translation into events.
func BenchmarkDecodeTranslate(b *testing.B) {
	frames := benchFrames(b)
	b.ReportAllocs()
	b.ResetTimer()
	var evs []Event
	for i := 0; i < b.N; i++ {
		tr := NewTranslator(0)
		for _, line := range frames {
			f, err := decodeLine(line)
			evs = decodeEvents(tr, f, err, line, evs[:0])
		}
	}
	reportPerFrame(b, len(frames))
	b.ReportMetric(float64(testing.AllocsPerRun(1, func() {
		tr := NewTranslator(0)
		for _, line := range frames {
			f, err := decodeLine(line)
			evs = decodeEvents(tr, f, err, line, evs[:0])
		}
	}))/float64(len(frames)), "allocs/frame")
}

// BenchmarkBaselineUnmarshalMap is the cost of merely parsing each line
// into map[string]any, the reference the pipeline is compared against.
func BenchmarkBaselineUnmarshalMap(b *testing.B) {
	frames := benchFrames(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, line := range frames {
			var m map[string]any
			_ = json.Unmarshal(line, &m)
		}
	}
	reportPerFrame(b, len(frames))
}

// BenchmarkBaselineValid is the floor: scanning each line once.
func BenchmarkBaselineValid(b *testing.B) {
	frames := benchFrames(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, line := range frames {
			_ = json.Valid(line)
		}
	}
	reportPerFrame(b, len(frames))
}

// BenchmarkQuietFrames is the pipeline over frames nothing renders (hooks,
// thinking-token estimates, heartbeats, non-text stream events): the
// target is zero allocations per frame.
func BenchmarkQuietFrames(b *testing.B) {
	lines := [][]byte{
		[]byte(`{"type":"system","subtype":"hook_started","hook_id":"h1","hook_name":"Stop","hook_event":"Stop","uuid":"u","session_id":"s"}`),
		[]byte(`{"type":"system","subtype":"thinking_tokens","estimated_tokens":8,"estimated_tokens_delta":8,"session_id":"s","uuid":"u"}`),
		[]byte(`{"type":"tool_progress","tool_use_id":"t-heartbeat-0","tool_name":"Bash","parent_tool_use_id":"t","elapsed_time_seconds":30,"heartbeat":true,"session_id":"s","uuid":"u"}`),
		[]byte(`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}},"session_id":"s","parent_tool_use_id":null,"uuid":"u"}`),
	}
	tr := NewTranslator(0)
	var evs []Event
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, line := range lines {
			f, err := decodeLine(line)
			evs = decodeEvents(tr, f, err, line, evs[:0])
		}
	}
	reportPerFrame(b, len(lines))
}

// BenchmarkPeekType is the zero-allocation dispatch step alone.
func BenchmarkPeekType(b *testing.B) {
	frames := benchFrames(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, line := range frames {
			_, _, _ = peekType(line)
		}
	}
	reportPerFrame(b, len(frames))
}
