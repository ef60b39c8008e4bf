package transcript

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// toolKeys are the input fields that say most about a tool call, in the
// order they are looked for: Bash's command, the file tools' paths, the
// search tools' patterns and queries, an agent's description, ….
var toolKeys = []string{
	"command", "file_path", "notebook_path", "pattern", "url", "query",
	"description", "skill", "subject", "path", "prompt", "plan",
}

// toolSummary is a tool call on one line: the most telling input field
// (see toolKeys), or the input's compact JSON, cut to n runes.
func toolSummary(name string, input json.RawMessage, n int) string {
	var fields map[string]json.RawMessage
	if json.Unmarshal(input, &fields) != nil {
		return clip(string(input), n)
	}
	switch name {
	case "TodoWrite":
		var todos []json.RawMessage
		if json.Unmarshal(fields["todos"], &todos) == nil {
			return plural(len(todos), "item")
		}
	case "AskUserQuestion":
		var qs []struct {
			Question string `json:"question"`
		}
		if json.Unmarshal(fields["questions"], &qs) == nil && len(qs) > 0 {
			return clip(qs[0].Question, n)
		}
	}
	for _, k := range toolKeys {
		var s string
		if json.Unmarshal(fields[k], &s) == nil && strings.TrimSpace(s) != "" {
			if k == "pattern" {
				var in string
				if json.Unmarshal(fields["path"], &in) == nil && in != "" {
					s += " in " + in
				}
			}
			return clip(s, n)
		}
	}
	if len(fields) == 0 {
		return ""
	}
	compact, err := json.Marshal(fields) // map keys sorted: stable
	if err != nil {
		return ""
	}
	return clip(string(compact), n)
}

// toolName keeps the characters tool names are made of (MCP tools are
// mcp__server__tool), so a hostile name cannot break the Markdown around it.
func toolName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r < 0x80 && (isAlnum(byte(r)) || strings.ContainsRune("_-.:", r)) {
			return r
		}
		return '?'
	}, name)
	return clip(name, 80)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// code is s as Markdown inline code, fenced with more backticks than any
// run inside it.
func code(s string) string {
	if s == "" {
		return ""
	}
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// quote is text as a Markdown block quote, so a prompt's own headings or
// rules cannot pass for the export's structure.
func quote(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		if l == "" {
			lines[i] = ">"
		} else {
			lines[i] = "> " + l
		}
	}
	return strings.Join(lines, "\n")
}

// thousands formats n with thin commas: 12,345.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func dollars(v float64) string {
	if v >= 1 {
		return fmt.Sprintf("$%.2f", v)
	}
	return fmt.Sprintf("$%.4f", v)
}
