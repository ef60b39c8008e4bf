package runner

import (
	"bytes"
	"encoding/json"
)

// maxLinks bounds the links kept of one result; the CLI keeps at most 50.
const maxLinks = 50

// resourceLinks reads tool_use_result.resourceLinks: the resource_link
// blocks of an MCP tool's result, which Claude sees as lines of text and
// the user should see as what they are. Entries without a URI are left out.
func resourceLinks(raw json.RawMessage) []ResourceLink {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var r struct {
		Links []ResourceLink `json:"resourceLinks"`
	}
	if json.Unmarshal(raw, &r) != nil {
		return nil
	}
	var out []ResourceLink
	for _, l := range r.Links {
		if l.URI == "" || len(out) == maxLinks {
			continue
		}
		if l.Name == "" {
			l.Name = l.URI
		}
		out = append(out, l)
	}
	return out
}
