package chat

// A Slot is a module's typed state in each chat, owned by the chat's
// actor like the engine's own fields: a module asks for one while it
// registers and reaches its chat's value with Get, from its hooks,
// commands and presses. Nothing else can see it.
type Slot[T any] struct{ id int }

// NewSlot asks r for a slot of T.
func NewSlot[T any](r *Registry) Slot[T] {
	r.slots++
	return Slot[T]{id: r.slots - 1}
}

// Get is c's value, made (zero) the first time. Call it on c's actor.
func (s Slot[T]) Get(c *Chat) *T {
	if c.slots == nil {
		c.slots = make([]any, c.b.reg.slots)
	}
	if v, ok := c.slots[s.id].(*T); ok {
		return v
	}
	v := new(T)
	c.slots[s.id] = v
	return v
}
