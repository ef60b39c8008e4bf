package bridge_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/runner/claudetest"
	"github.com/untether/untether/internal/runner/fakeapi"
	"github.com/untether/untether/internal/telegramtest"
)

// MCP resource links are shown as what they are (issue 24 §4): with the
// real CLI and an MCP server whose tool returns a resource_link, the answer
// names the link, and a linked file inside the project arrives as a
// document, as /get would send it; a linked file [files] deny matches is
// only named.
func TestResourceLinksAreShownAndLocalFilesSent(t *testing.T) {
	for _, denied := range []bool{false, true} {
		t.Run(map[bool]string{false: "sent", true: "denied"}[denied], func(t *testing.T) {
			chat := telegramtest.ChatID(alice)
			var uri string
			r := newRig(t, withRules(fakeapi.ToolTurn("LINKS", "mcp__files__get_report", map[string]any{}, "Linked.")),
				withConfig(func(c *config.Config) {
					uri = "file://" + c.Claude.Workdir + "/report.txt"
					c.Claude.ExtraArgs = append(c.Claude.ExtraArgs, "--mcp-config", claudetest.ResourceLinkMCPConfig(t, uri), "--strict-mcp-config")
					if denied {
						c.Files.Deny = append(c.Files.Deny, "report.txt")
					}
				}))
			require.NoError(t, os.WriteFile(filepath.Join(r.claude.Workdir, "report.txt"), []byte("the quarterly report"), 0o600))
			in := r.say(chat, alice, "LINKS please")
			ap := r.approvalMessage(chat, "get_report")
			r.tg.UserPresses(chat, ap.ID, buttonData(ap, "Approve"))
			answer := r.finalAnswer(chat, in.ID, "Linked.")
			assert.Contains(t, answer.Text, "🔗 report.txt: "+uri)
			if !denied {
				doc := r.waitBot(chat, "the linked file", func(m telegramtest.Message) bool { return m.Document != nil })
				assert.Equal(t, "the quarterly report", string(doc.Document.Data))
				assert.Equal(t, in.ID, doc.ReplyTo)
				return
			}
			next := r.say(chat, alice, "anything else?")
			r.finalAnswer(chat, next.ID, "echo: anything else?")
			for _, m := range r.tg.Snapshot().BotMessages(chat) {
				assert.Nil(t, m.Document, "a denied file is not sent: %q", m.Text)
				assert.False(t, strings.Contains(m.Text, "the quarterly report"))
			}
		})
	}
}
