package bridge

// HoldZips makes every /get zip of the test wait, before it opens each
// file, until the returned release is called: a zip still being made.
func HoldZips() (release func()) {
	gate := make(chan struct{})
	hook := func(string) { <-gate }
	beforeZipOpen.Store(&hook)
	return func() {
		beforeZipOpen.Store(nil)
		close(gate)
	}
}
