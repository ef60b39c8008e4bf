package runner

// peekType reads the top-level "type" and "subtype" string values of a JSON
// object without allocating for the names the protocol uses. It lets the
// decoder pick the frame struct (and skip frames nobody renders) with one
// cheap pass. It does not validate the JSON: the full decoder does that. ok
// is false when the line is not an object or a name uses escapes.
func peekType(line []byte) (typ, subtype string, ok bool) {
	i := skipWS(line, 0)
	if i >= len(line) || line[i] != '{' {
		return "", "", false
	}
	i++
	var haveType, haveSub bool
	for {
		i = skipWS(line, i)
		if i >= len(line) {
			return "", "", false
		}
		if line[i] == '}' {
			return typ, subtype, haveType
		}
		if line[i] == ',' {
			i++
			continue
		}
		if line[i] != '"' {
			return "", "", false
		}
		keyStart := i + 1
		keyEnd, esc := scanString(line, i)
		if keyEnd < 0 {
			return "", "", false
		}
		key := line[keyStart:keyEnd]
		i = skipWS(line, keyEnd+1)
		if i >= len(line) || line[i] != ':' {
			return "", "", false
		}
		i = skipWS(line, i+1)
		if i >= len(line) {
			return "", "", false
		}
		isType := !esc && string(key) == "type"
		isSub := !esc && string(key) == "subtype"
		if (isType || isSub) && line[i] == '"' {
			vEnd, vEsc := scanString(line, i)
			if vEnd < 0 || vEsc {
				return "", "", false
			}
			v := intern(line[i+1 : vEnd])
			if isType {
				typ, haveType = v, true
			} else {
				subtype, haveSub = v, true
			}
			i = vEnd + 1
			if haveType && (haveSub || typ != "system") {
				return typ, subtype, true
			}
			continue
		}
		i = skipValue(line, i)
		if i < 0 {
			return "", "", false
		}
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanString returns the index of the closing quote of the string starting
// at b[i] (a quote), and whether it contained escapes; -1 if unterminated.
func scanString(b []byte, i int) (end int, escaped bool) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j, escaped
		}
	}
	return -1, escaped
}

// skipValue returns the index just past the JSON value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		end, _ := scanString(b, i)
		if end < 0 {
			return -1
		}
		return end + 1
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, _ := scanString(b, j)
				if end < 0 {
					return -1
				}
				j = end
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		for j := i; j < len(b); j++ {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return j
			}
		}
		return len(b)
	}
}

// intern maps the protocol's type and subtype names to constant strings so
// peeking allocates nothing; the switch on string(b) does not allocate.
func intern(b []byte) string {
	switch string(b) {
	case "system":
		return "system"
	case "assistant":
		return "assistant"
	case "user":
		return "user"
	case "result":
		return "result"
	case "rate_limit_event":
		return "rate_limit_event"
	case "tool_progress":
		return "tool_progress"
	case "stream_event":
		return "stream_event"
	case "control_request":
		return "control_request"
	case "control_cancel_request":
		return "control_cancel_request"
	case "control_response":
		return "control_response"
	case "command_lifecycle":
		return "command_lifecycle"
	case "conversation_reset":
		return "conversation_reset"
	case "init":
		return "init"
	case "api_retry":
		return "api_retry"
	case "status":
		return "status"
	case "compact_boundary":
		return "compact_boundary"
	case "informational":
		return "informational"
	case "notification":
		return "notification"
	case "thinking_tokens":
		return "thinking_tokens"
	case "hook_started":
		return "hook_started"
	case "hook_progress":
		return "hook_progress"
	case "hook_response":
		return "hook_response"
	case "task_started":
		return "task_started"
	case "task_progress":
		return "task_progress"
	case "task_updated":
		return "task_updated"
	case "task_notification":
		return "task_notification"
	case "success":
		return "success"
	}
	return string(b)
}
