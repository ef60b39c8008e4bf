package login

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCodeShaped: a code sent without replying is taken only when it
// looks like one.
func TestCodeShaped(t *testing.T) {
	for text, want := range map[string]bool{
		"Zq3aTESTcodeFROMtheCALLBACKpage0123#st4te-9f8e7d": true,
		"#123": false, "see issue #1234567890123456789": false, "abcdefghijklmnopqrstuvwxyz#": false,
		"#abcdefghijklmnopqrstuvwxyz": false, "hello": false,
	} {
		assert.Equal(t, want, codeShaped(text), text)
	}
}
