package owndir

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/bridge/state"
)

// TestOwnDirRefusalsAreReportedOnce: a refused directory is logged once
// and each chat is told once, until the directory opens as it should.
func TestOwnDirRefusalsAreReportedOnce(t *testing.T) {
	var o Reports
	a, b := state.ChatKey{Chat: 1}, state.ChatKey{Chat: 2}
	assert.True(t, o.first("/p/.untether/sent", a))
	assert.False(t, o.first("/p/.untether/sent", a), "once per chat")
	assert.True(t, o.first("/p/.untether/sent", b))
	assert.True(t, o.first("/p/.untether", a))
	o.fine("/p", ".untether/sent")
	assert.True(t, o.first("/p/.untether/sent", a), "told again once it was fine")
	assert.True(t, o.first("/p/.untether", a), "the parents were fine too")
}
