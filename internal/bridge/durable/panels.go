package durable

import (
	"context"

	"github.com/untether/untether/internal/bridge/state"
)

// A chat's control panel (/panel): a write replaces what the chat's panel
// slot held, so a refused one is kept and done once the disk takes writes.

func panelSlot(k state.ChatKey) string { return "panel:" + k.String() }

func (w *Writes) PutPanel(ctx context.Context, p state.Panel) error {
	return w.write(ctx, writeOp{kind: kindSettings, slot: panelSlot(p.Key), key: &p.Key, replaces: true},
		func(ctx context.Context) error { return w.Store.PutPanel(ctx, p) })
}

func (w *Writes) DeletePanel(ctx context.Context, key state.ChatKey) error {
	return w.write(ctx, writeOp{kind: kindSettings, slot: panelSlot(key), key: &key, replaces: true},
		func(ctx context.Context) error { return w.Store.DeletePanel(ctx, key) })
}
