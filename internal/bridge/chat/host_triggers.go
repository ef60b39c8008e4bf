package chat

// Draining reports whether untether is stopping (the drain began): work
// that would start a turn is refused, to be sent again after the restart
// (a webhook's delivery is answered 503). Any goroutine may call it.
func (h *Host) Draining() bool { return h.e.draining.Load() }
