package metrics

import (
	"slices"
	"strings"
	"sync"

	vm "github.com/VictoriaMetrics/metrics"
)

// maxLabels is the most labels a family of events has (project and
// outcome, method and status, …); build info, with three, is made once
// with seriesName and is no family.
const maxLabels = 2

// family is a metric with labels whose series are made on first use, as
// client_golang's *Vec made them. The library names a series by its whole
// text (name{label="value",…}); a map from the label values to the series
// spares each event building that string: counting an event whose series
// exists allocates nothing.
type family[T any] struct {
	set    *vm.Set
	name   string
	labels []string
	create func(s *vm.Set, series string) *T

	mu     sync.RWMutex
	series map[[maxLabels]string]*T
}

func newFamily[T any](s *vm.Set, create func(*vm.Set, string) *T, name string, labels ...string) *family[T] {
	if len(labels) == 0 || len(labels) > maxLabels {
		panic("metrics: a family has 1 to 2 labels: " + name)
	}
	return &family[T]{set: s, name: name, labels: labels, create: create, series: map[[maxLabels]string]*T{}}
}

// with returns the series of values, one per label in the order the
// family was made with, making it on first use.
func (f *family[T]) with(values ...string) *T {
	var key [maxLabels]string
	copy(key[:], values)
	f.mu.RLock()
	s := f.series[key]
	f.mu.RUnlock()
	if s != nil {
		return s
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if s = f.series[key]; s == nil { // another event may have made it meanwhile
		s = f.create(f.set, seriesName(f.name, f.labels, values))
		f.series[key] = s
	}
	return s
}

// seriesName is the text the library names a series by:
// name{label="value",…}, the labels sorted by name as client_golang wrote
// them, each value escaped as the text format wants.
func seriesName(name string, labels, values []string) string {
	order := make([]int, len(labels))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(labels[a], labels[b]) })
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for n, i := range order {
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(labels[i])
		b.WriteString(`="`)
		b.WriteString(escapeLabel(values[i]))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// labelEscaper escapes a label value as Prometheus' text format wants: the
// library writes a series' name as it was given, so an unescaped quote in
// a project's name would end the value early (and the library refuses a
// name holding a newline, with a panic).
var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// escapeLabel escapes v for the text format. Invalid UTF-8, which a
// scraper's parser rejects and client_golang refused with a panic, is
// replaced by U+FFFD.
func escapeLabel(v string) string {
	return labelEscaper.Replace(strings.ToValidUTF8(v, "\uFFFD"))
}
