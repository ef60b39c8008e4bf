package bridge

import (
	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/modules/files"
)

// ButtonKinds is every kind of button, as the first byte of its callback
// data: the list the press router accepts.
func ButtonKinds() []byte { return chat.ButtonKinds(modules) }

// HoldZips makes every /get zip of the test wait, before it opens each
// file, until the returned release is called: a zip still being made.
func HoldZips() (release func()) { return files.HoldZips() }
