package ingress

import (
	"strings"
	"unicode/utf16"

	"github.com/go-telegram/bot/models"
)

// Command is a bot command at the start of a message: "/mode plan" →
// {Name: "mode", Args: "plan"}. Name is lower-case and without a
// "@botname" suffix.
type Command struct {
	Name string
	Args string
}

// ParseCommand finds a bot_command entity at offset 0 and slices the text by
// UTF-16 units, as Telegram counts entity offsets. go-telegram/bot's own
// matcher slices by bytes, which fails (or panics) after non-ASCII text.
func ParseCommand(text string, entities []models.MessageEntity, botUsername string) (Command, bool) {
	for _, e := range entities {
		if e.Type != models.MessageEntityTypeBotCommand || e.Offset != 0 || e.Length < 2 {
			continue
		}
		units := utf16.Encode([]rune(text))
		if e.Length > len(units) {
			return Command{}, false
		}
		name := string(utf16.Decode(units[1:e.Length]))
		rest := string(utf16.Decode(units[e.Length:]))
		if at := strings.IndexByte(name, '@'); at >= 0 {
			if botUsername != "" && !strings.EqualFold(name[at+1:], botUsername) {
				return Command{}, false // addressed to another bot in a group
			}
			name = name[:at]
		}
		return Command{Name: strings.ToLower(name), Args: strings.TrimSpace(rest)}, true
	}
	return Command{}, false
}
