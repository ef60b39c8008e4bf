package render

import (
	"encoding/json"
	"path"
	"strings"

	"github.com/untether/untether/internal/runner"
)

// The approval message of an Edit or Write shows a short diff: at most
// diffSideLines lines per side, writeHeadLines of a new file, and whatever
// fits in one message. When that is less than the whole change, the
// approval offers a 📄 Full diff button; FullDiff is the document it sends.

// edit is one replacement of an Edit or MultiEdit.
type edit struct {
	Old        string `json:"old_string"`
	New        string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

// editsOf reads the file and the replacements of an Edit or MultiEdit input.
func editsOf(tool string, input json.RawMessage) (string, []edit) {
	m := inputFields(input)
	file := firstNonEmpty(stringField(m, "file_path"), stringField(m, "notebook_path"))
	var edits []edit
	if tool == "MultiEdit" {
		_ = json.Unmarshal(m["edits"], &edits)
	} else {
		var e edit
		if json.Unmarshal(input, &e) == nil {
			edits = append(edits, e)
		}
	}
	return file, edits
}

// PreviewTruncated reports whether the approval message of req shows less
// than the whole change of an Edit, MultiEdit or Write.
func PreviewTruncated(req runner.ApprovalRequested) bool {
	switch req.Tool {
	case "Edit", "MultiEdit":
		_, edits := editsOf(req.Tool, req.Input)
		for _, e := range edits {
			var capped, whole strings.Builder
			writeDiffN(&capped, e.Old, e.New, diffSideLines, diffContext)
			writeDiffN(&whole, e.Old, e.New, -1, diffContext)
			if capped.String() != whole.String() {
				return true
			}
		}
	case "Write":
		if len(splitLines(stringField(inputFields(req.Input), "content"))) > writeHeadLines {
			return true
		}
	default:
		return false
	}
	// The content had to be cut to fit the message.
	return approvalBody(req, SafeChunkLimit).n < approvalBody(req, 1<<30).n
}

// FullDiff returns the whole change an Edit, MultiEdit or Write request
// would make, as the text of a .diff document, and that document's name.
// ok is false for other tools.
func FullDiff(req runner.ApprovalRequested) (name, diff string, ok bool) {
	var b strings.Builder
	var file string
	switch req.Tool {
	case "Edit", "MultiEdit":
		var edits []edit
		file, edits = editsOf(req.Tool, req.Input)
		b.WriteString("--- " + file + "\n+++ " + file + " (proposed)\n")
		for i, e := range edits {
			if i > 0 {
				b.WriteString("⋯\n")
			}
			if e.ReplaceAll {
				b.WriteString("# every occurrence\n")
			}
			writeDiffN(&b, e.Old, e.New, -1, 1<<30)
		}
	case "Write":
		m := inputFields(req.Input)
		file = stringField(m, "file_path")
		b.WriteString("--- " + file + " (replaced or created)\n+++ " + file + " (proposed)\n")
		for _, l := range splitLines(stringField(m, "content")) {
			b.WriteString("+ " + l + "\n")
		}
	default:
		return "", "", false
	}
	base := path.Base(strings.ReplaceAll(file, "\\", "/"))
	if base == "." || base == "/" || base == "" {
		base = "change"
	}
	return base + ".diff", b.String(), true
}
