package render

import (
	"strconv"

	"github.com/untether/untether/internal/runner"
)

// Resource links are what an MCP tool returned by reference (a file, a
// document): Claude reads them as lines of text; the user sees each as a
// name and its URI, under the answer.

// maxTurnLinks bounds the links a turn keeps; maxShownLinks those listed.
const (
	maxTurnLinks  = 50
	maxShownLinks = 5
	linkURIMax    = 160
)

func (t *Turn) addLinks(links []runner.ResourceLink) {
	for _, l := range links {
		if len(t.links) == maxTurnLinks {
			return
		}
		t.links = append(t.links, l)
	}
}

// linkLines are the "what happened" lines of a turn's links.
func linkLines(links []runner.ResourceLink) []string {
	var out []string
	for i, l := range links {
		if i == maxShownLinks {
			out = append(out, "🔗 +"+strconv.Itoa(len(links)-i)+" more")
			break
		}
		name := firstNonEmpty(oneLine(l.Title), oneLine(l.Name))
		out = append(out, "🔗 "+Truncate(name, rowSummaryMax)+": "+Truncate(oneLine(l.URI), linkURIMax))
	}
	return out
}
