package ingress

import (
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/assert"
)

func TestParseCommand(t *testing.T) {
	cmd := func(off, n int) []models.MessageEntity {
		return []models.MessageEntity{{Type: models.MessageEntityTypeBotCommand, Offset: off, Length: n}}
	}
	tests := []struct {
		name, text string
		ents       []models.MessageEntity
		want       Command
		ok         bool
	}{
		{"plain", "/status", cmd(0, 7), Command{Name: "status"}, true},
		{"args", "/mode  plan ", cmd(0, 5), Command{Name: "mode", Args: "plan"}, true},
		{"bot suffix", "/new@untether_bot", cmd(0, 17), Command{Name: "new"}, true},
		{"other bot", "/new@other_bot", cmd(0, 14), Command{}, false},
		{"upper", "/HELP", cmd(0, 5), Command{Name: "help"}, true},
		{"emoji args", "/model 😀 x", cmd(0, 6), Command{Name: "model", Args: "😀 x"}, true},
		{"not at start", "héllo /cancel", cmd(6, 7), Command{}, false},
		{"no entity", "/cancel", nil, Command{}, false},
		{"length past end", "/x", cmd(0, 9), Command{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseCommand(tt.text, tt.ents, "untether_bot")
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}
