package metrics

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const dashboardPath = "../../../deploy/grafana/untether.json"

type gridPos struct{ H, W, X, Y int }

type dashPanel struct {
	ID      int      `json:"id"`
	Type    string   `json:"type"`
	Title   string   `json:"title"`
	GridPos gridPos  `json:"gridPos"`
	Targets []target `json:"targets"`
}

type target struct {
	RefID string `json:"refId"`
	Expr  string `json:"expr"`
}

type dashboard struct {
	UID        string      `json:"uid"`
	Title      string      `json:"title"`
	Panels     []dashPanel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

// metricName is a metric in a PromQL expression; histogram series are
// reduced to their family.
var metricName = regexp.MustCompile(`\b(untether_[a-z_]+?)(?:_bucket|_sum|_count)?\b`)

// TestDashboardMatchesMetrics: the Grafana dashboard draws every untether
// metric, and only metrics untether defines (a renamed metric would leave
// an empty panel that nobody notices).
func TestDashboardMatchesMetrics(t *testing.T) {
	raw, err := os.ReadFile(dashboardPath)
	require.NoError(t, err)
	var d dashboard
	require.NoError(t, json.Unmarshal(raw, &d))
	require.NotEmpty(t, d.UID)
	require.NotEmpty(t, d.Panels)

	defined := definedNames(t)
	used := map[string]bool{}
	note := func(expr string) {
		for _, m := range metricName.FindAllStringSubmatch(expr, -1) {
			used[m[1]] = true
		}
	}
	ids := map[int]bool{}
	var cells []dashPanel
	for _, p := range d.Panels {
		assert.False(t, ids[p.ID], "panel id %d is used twice", p.ID)
		ids[p.ID] = true
		assert.NotEmpty(t, p.Title, "panel %d has no title", p.ID)
		assert.True(t, p.GridPos.X >= 0 && p.GridPos.W > 0 && p.GridPos.X+p.GridPos.W <= 24 && p.GridPos.H > 0,
			"panel %q lies outside the 24-column grid: %+v", p.Title, p.GridPos)
		if p.Type == "row" {
			assert.Empty(t, p.Targets)
		} else {
			assert.NotEmpty(t, p.Targets, "panel %q draws nothing", p.Title)
		}
		for _, tg := range p.Targets {
			assert.NotEmpty(t, tg.RefID, "panel %q", p.Title)
			assert.NotEmpty(t, tg.Expr, "panel %q", p.Title)
			note(tg.Expr)
		}
		for _, o := range cells {
			overlap := p.GridPos.X < o.GridPos.X+o.GridPos.W && o.GridPos.X < p.GridPos.X+p.GridPos.W &&
				p.GridPos.Y < o.GridPos.Y+o.GridPos.H && o.GridPos.Y < p.GridPos.Y+p.GridPos.H
			assert.False(t, overlap, "panels %q and %q overlap", p.Title, o.Title)
		}
		cells = append(cells, p)
	}
	for _, v := range d.Templating.List {
		note(v.Definition)
	}

	for name := range used {
		assert.True(t, slices.Contains(defined, name), "the dashboard uses %s, which untether does not define", name)
	}
	for _, name := range defined {
		assert.True(t, used[name], "the dashboard does not show %s", name)
	}
}
