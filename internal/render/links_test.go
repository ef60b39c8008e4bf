package render

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/runner"
)

func TestLinkLines(t *testing.T) {
	assert.Empty(t, linkLines(nil))
	assert.Equal(t, []string{"🔗 Q3 report: file:///srv/p/report.txt", "🔗 https://x.example/a: https://x.example/a"},
		linkLines([]runner.ResourceLink{{Name: "report.txt", Title: "Q3 report", URI: "file:///srv/p/report.txt"},
			{Name: "https://x.example/a", URI: "https://x.example/a"}}))
	var many []runner.ResourceLink
	for i := range 8 {
		many = append(many, runner.ResourceLink{Name: fmt.Sprint("f", i), URI: fmt.Sprint("file:///f", i)})
	}
	lines := linkLines(many)
	assert.Len(t, lines, maxShownLinks+1)
	assert.Equal(t, "🔗 +3 more", lines[maxShownLinks])
}
