package files

import (
	"net/url"
	"path"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/render"
)

// maxLinkedFiles bounds the files one turn's resource links send.
const maxLinkedFiles = 5

// sendLinkedFiles sends the files an MCP tool returned by reference
// (resource links with a file:// URI) when they are in the turn's project
// on this machine, as /get would send them (get.go: inside the project, no
// [files] deny match, nothing of .untether, no links on the way, sent from
// the descriptor checked). A link to anything else stays a line under the
// answer (render/links.go).
func (m *Module) sendLinkedFiles(c *chat.Chat, e chat.TurnEnd) {
	if e.Workdir == "" || len(e.Links) == 0 {
		return
	}
	deny := c.Config().Files.Deny
	sent := 0
	for _, l := range e.Links {
		u, err := url.Parse(l.URI)
		if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") || u.Path == "" {
			continue
		}
		target, err := resolveGet(e.Workdir, u.Path, deny)
		if err != nil { // outside the project, denied, in .untether, a link, gone
			c.Log().Info().Str("uri", l.URI).Err(err).Msg("a linked file is not sent")
			continue
		}
		if target.file == nil {
			continue // a directory
		}
		size := target.info.Size()
		if size == 0 || size > maxDocumentBytes || sent == maxLinkedFiles {
			target.file.Close()
			continue
		}
		sent++
		shown := "🔗 " + render.Code(target.rel) + " · " + render.FormatSize(size)
		c.SendMedia(outbox.High, outbox.Media{Files: []outbox.MediaFile{{Kind: outbox.MediaDocument,
			Dir: e.Workdir, Path: target.rel, Name: path.Base(target.rel), Caption: shown, File: target.file}}},
			outbox.SendOptions{ReplyTo: outbox.MessageID(e.ReplyTo), Tag: tagFile})
	}
}
