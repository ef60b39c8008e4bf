package chat

// The modules that still live in this package, while they move out to
// internal/bridge/modules one by one; bridge's modules.go lists them.

// PhoneModule is voice notes, edits, albums and attachments.
func PhoneModule(h *Host) Module { return phoneModule{h.e} }

type (
	placesModule struct{ b *Engine }
	filesModule  struct{ b *Engine }
	phoneModule  struct{ b *Engine }
)
