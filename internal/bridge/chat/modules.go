package chat

// modules are the bridge's features, in the order the engine calls their
// hooks and lists their commands in /help. The order is behaviour: a
// mode switch the CLI reports is followed (settings) before a turn's cost
// is counted (budget) and a waiting scheduled run goes (schedules).
func modules(b *Engine) []Module {
	return []Module{
		settingsModule{b},
		budgetModule{b},
		schedulesModule{b},
		placesModule{b},
		filesModule{b},
		phoneModule{b},
		newMCPModule(b),
		newBackgroundModule(),
	}
}

// The modules, while they still live in this package; each registers in
// the file of its feature.
type (
	settingsModule  struct{ b *Engine }
	budgetModule    struct{ b *Engine }
	schedulesModule struct{ b *Engine }
	placesModule    struct{ b *Engine }
	filesModule     struct{ b *Engine }
	phoneModule     struct{ b *Engine }
)
