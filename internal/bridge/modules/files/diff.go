package files

import (
	"path"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/owndir"
	"github.com/untether/untether/internal/render"
)

// btnFullDiff is 📄 Full diff of an approval; its token is the approval's.
const btnFullDiff chat.ButtonKind = 'f'

// sendFullDiff sends an approval's whole change as a .diff document,
// replying to the approval message: pressed, its id as the press gave it,
// since the outbox may not have the answer to its send yet (seen under
// load: the diff then went out as a reply to nothing).
func (m *Module) sendFullDiff(c *chat.Chat, a *chat.Approval, pressed int) {
	replyTo := a.Message().ID()
	if pressed != 0 {
		replyTo = outbox.MessageID(pressed)
	}
	name, diff, ok := render.FullDiff(a.Request())
	if !ok {
		return
	}
	workdir := c.UploadDir(c.Config())
	if workdir == "" {
		c.Reply("⚠️ The full diff is written to the project directory before it is sent, and this chat's project is on another host.", int(replyTo))
		return
	}
	f, rel, err := owndir.WriteSent(workdir, name, []byte(diff), a.Created())
	if err != nil {
		m.dirs.Refused(err)
		c.Log().Warn().Err(err).Msg("write the full diff")
		c.Reply("⚠️ Could not prepare the diff: "+render.EscapeHTML(err.Error()), int(replyTo))
		return
	}
	// Sent from the descriptor written: .untether/sent is writable by
	// Claude's tools, so the name may not be this file by the time of
	// the upload.
	c.SendMedia(outbox.High, outbox.Media{Files: []outbox.MediaFile{{Kind: outbox.MediaDocument,
		Dir: workdir, Path: rel, Name: name, File: f, Caption: "📄 The whole change to " + render.Code(path.Base(name[:len(name)-len(".diff")]))}}},
		outbox.SendOptions{ReplyTo: replyTo, Tag: tagFile})
}
