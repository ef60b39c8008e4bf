package health

import (
	"maps"
	"slices"
	"sync"
	"time"
)

// Conditions are named troubles that degrade the daemon without making it
// unhealthy, raised and cleared by the part that sees them (the state
// writes: "state", when the disk refuses writes and again when it takes
// them). Safe for concurrent use; the zero value has none.
type Conditions struct {
	mu sync.Mutex
	m  map[string]condition
}

type condition struct {
	err   error
	since time.Time
}

// Raise records trouble name, caused by err, since since. Raising it again
// keeps the first since and takes the latest err.
func (c *Conditions) Raise(name string, err error, since time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]condition{}
	}
	if old, ok := c.m[name]; ok {
		since = old.since
	}
	c.m[name] = condition{err: err, since: since}
}

// Clear forgets trouble name.
func (c *Conditions) Clear(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, name)
}

// Degraded implements Degradation: one line per trouble, by name.
func (c *Conditions) Degraded(now time.Time) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, name := range slices.Sorted(maps.Keys(c.m)) {
		d := c.m[name]
		out = append(out, name+": "+oneLine(d.err.Error())+" (for "+now.Sub(d.since).Round(time.Second).String()+")")
	}
	return out
}
