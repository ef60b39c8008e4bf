package places

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/untether/untether/internal/runner"
)

// A chat remembers the uuids of its own last ownMax messages, not more:
// the oldest are forgotten first, and one noted twice counts once.
func TestPickupRemembersItsOwnMessagesBounded(t *testing.T) {
	var pk pickup
	for i := range ownMax + 10 {
		pk.noteOwn(runner.MessageUUID("u" + strconv.Itoa(i)))
		pk.noteOwn(runner.MessageUUID("u" + strconv.Itoa(i)))
	}
	pk.noteOwn("")
	assert.Len(t, pk.own, ownMax)
	assert.Len(t, pk.order, ownMax)
	assert.False(t, pk.isOwn("u9"), "the oldest are forgotten")
	assert.True(t, pk.isOwn("u10"))
	assert.True(t, pk.isOwn("u"+strconv.Itoa(ownMax+9)))
	assert.False(t, pk.isOwn(""))
}

func TestPickedUpSaysHowMany(t *testing.T) {
	for n, want := range map[int]string{
		1: "💻 picked up 1 turn from the terminal",
		2: "💻 picked up 2 turns from the terminal",
	} {
		assert.Equal(t, want, pickedUp(n))
	}
	for n, want := range map[int]string{
		1: "💻 1 turn from the terminal not picked up: a reload moved this chat since Claude here started, so it went on from its own copy",
		2: "💻 2 turns from the terminal not picked up: a reload moved this chat since Claude here started, so it went on from its own copy",
	} {
		assert.Equal(t, want, notPickedUp(n))
	}
	for n, want := range map[int]string{
		1: "💻 1 turn from the terminal not picked up: it is on a branch this conversation does not continue (a turn typed while Claude here was busy forks it), so Claude did not see it",
		2: "💻 2 turns from the terminal not picked up: they are on a branch this conversation does not continue (a turn typed while Claude here was busy forks it), so Claude did not see them",
	} {
		assert.Equal(t, want, forkedOff(n))
	}
}
