//go:build race

package main

// raceEnabled: the tests run under -race, so the daemon they start is built
// with it as well.
const raceEnabled = true
