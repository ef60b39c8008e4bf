package config

import (
	"sync"
	"time"
	_ "time/tzdata" // zone names work on hosts without /usr/share/zoneinfo
)

var locations sync.Map // name → *time.Location

// LoadLocation returns the IANA zone name's location, the host's for "", and
// the host's too for a name that does not load (Validate refuses those).
// Locations are cached: loading one reads and parses zone data.
func LoadLocation(name string) *time.Location {
	if name == "" {
		return time.Local
	}
	if l, ok := locations.Load(name); ok {
		return l.(*time.Location)
	}
	l, err := time.LoadLocation(name)
	if err != nil {
		return time.Local
	}
	locations.Store(name, l)
	return l
}
