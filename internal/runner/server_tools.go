package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// Server tools (web_search, web_fetch, code execution) run on the API's
// side: the model's message holds a server_tool_use block and, after it, a
// result block of the tool's own type ("web_search_tool_result", …) with
// the tool_use_id. No tool_result comes back in a user message, so the
// result block is what ends the tool's row. An error is an object whose
// type ends in "_error" (with an error_code), or a non-zero return_code.

// isServerToolResult reports whether an assistant block type is a server
// tool's result. advisor_tool_result has the tool_result shape (content and
// is_error) and may come in either message.
func isServerToolResult(blockType string) bool {
	return strings.HasSuffix(blockType, "_tool_result")
}

// serverToolResult reads a server tool's result block.
func serverToolResult(b ContentBlock) (ok bool, preview string) {
	c := bytes.TrimSpace(b.Content)
	if len(c) == 0 || c[0] != '{' && c[0] != '[' {
		return !b.IsError, toolResultText(c)
	}
	if c[0] == '[' {
		var items []struct {
			Type  string `json:"type"`
			Title string `json:"title"`
			URL   string `json:"url"`
		}
		if json.Unmarshal(c, &items) == nil && len(items) > 0 && strings.HasSuffix(items[0].Type, "_result") && items[0].Type != "tool_result" {
			names := make([]string, 0, len(items))
			for _, it := range items {
				names = append(names, strings.TrimSpace(it.Title+" ("+hostOf(it.URL)+")"))
			}
			what := "results"
			if len(items) == 1 {
				what = "result"
			}
			return !b.IsError, fmt.Sprintf("%d %s: %s", len(items), what, strings.Join(names, ", "))
		}
		return !b.IsError, toolResultText(c)
	}
	var obj struct {
		Type       string `json:"type"`
		ErrorCode  string `json:"error_code"`
		URL        string `json:"url"`
		Stdout     string `json:"stdout"`
		Stderr     string `json:"stderr"`
		ReturnCode *int   `json:"return_code"`
	}
	if json.Unmarshal(c, &obj) != nil {
		return !b.IsError, toolResultText(c)
	}
	switch {
	case strings.HasSuffix(obj.Type, "_error") || obj.ErrorCode != "":
		code := obj.ErrorCode
		if code == "" {
			code = obj.Type
		}
		return false, "error: " + code
	case obj.ReturnCode != nil:
		out := strings.TrimSpace(obj.Stdout)
		if *obj.ReturnCode != 0 {
			out = strings.TrimSpace(fmt.Sprintf("exit %d %s", *obj.ReturnCode, strings.TrimSpace(obj.Stderr)))
		}
		return *obj.ReturnCode == 0 && !b.IsError, out
	case obj.URL != "":
		return !b.IsError, "fetched " + obj.URL
	}
	return !b.IsError, toolResultText(c)
}

func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return raw
}

// serverToolFinished ends the row of the server tool a result block
// answers.
func (t *Translator) serverToolFinished(b ContentBlock, parent ToolUseID) ToolFinished {
	id := ToolUseID(b.ToolUseID)
	name := t.tools[id]
	delete(t.tools, id)
	ok, preview := serverToolResult(b)
	return ToolFinished{ID: id, Name: name, OK: ok, Preview: truncate(preview, previewLimit), ParentID: parent}
}
