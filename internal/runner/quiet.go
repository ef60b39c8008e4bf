package runner

import "bytes"

// QuietFrame stands for a frame of a known kind that carries nothing any
// consumer shows or acts on: hook lifecycle, thinking-token estimates, tool
// heartbeats, and stream events other than answer text. The hot path
// recognises these by their type alone and skips decoding them, so they
// cost no allocations. DecodeFrame still decodes them fully when asked.
type QuietFrame struct{ kind string }

// Kind implements Frame.
func (f *QuietFrame) Kind() string { return f.kind }

var quietFrames = map[string]*QuietFrame{}

func init() {
	for _, k := range []string{
		"tool_progress", "stream_event",
		"system/hook_started", "system/hook_progress", "system/hook_response", "system/thinking_tokens",
	} {
		quietFrames[k] = &QuietFrame{kind: k}
	}
}

var textDelta = []byte(`"text_delta"`)

// decodeLine is the pipeline's decoder: quiet frames are recognised from
// their type with no allocation; everything else goes to DecodeFrame.
func decodeLine(line []byte) (Frame, error) {
	typ, subtype, ok := peekType(line)
	if ok {
		switch typ {
		case "tool_progress":
			return quietFrames["tool_progress"], nil
		case "stream_event":
			// Only answer-text deltas become events.
			if !bytes.Contains(line, textDelta) {
				return quietFrames["stream_event"], nil
			}
		case "system":
			switch subtype {
			case "hook_started", "hook_progress", "hook_response", "thinking_tokens":
				return quietFrames["system/"+subtype], nil
			}
		}
	}
	return DecodeFrame(line)
}
