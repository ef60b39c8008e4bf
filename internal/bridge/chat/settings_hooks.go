package chat

// The engine's side of two module hooks (registry.go): OnSettingsChanged,
// so what shows a chat's settings (a control panel) stays true, and
// OnCancel, so /cancel reaches what a module waits for.

// settingsChanged runs the OnSettingsChanged hooks: the chat's record was
// just saved.
func (c *Chat) settingsChanged() {
	for _, h := range c.b.reg.onChanged {
		h(c)
	}
}

// settingsReloaded runs the OnSettingsChanged hooks of every chat with an
// actor, on that actor, after a config reload.
func (b *Engine) settingsReloaded() {
	if len(b.reg.onChanged) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.chats {
		c.post(item{fn: c.settingsChanged})
	}
}

// cancelOwn asks the OnCancel hooks whether /cancel is theirs.
func (c *Chat) cancelOwn(replyTo int) bool {
	for _, h := range c.b.reg.onCancel {
		if h(c, replyTo) {
			return true
		}
	}
	return false
}
