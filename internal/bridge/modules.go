package bridge

// modules are the bridge's features, in the order the engine calls their
// hooks and lists their commands in /help. The order is behaviour: a
// mode switch the CLI reports is followed (settings) before a turn's cost
// is counted (budget) and a waiting scheduled run goes (schedules).
func modules(b *Bridge) []Module {
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
	settingsModule  struct{ b *Bridge }
	budgetModule    struct{ b *Bridge }
	schedulesModule struct{ b *Bridge }
	placesModule    struct{ b *Bridge }
	filesModule     struct{ b *Bridge }
	phoneModule     struct{ b *Bridge }
)
