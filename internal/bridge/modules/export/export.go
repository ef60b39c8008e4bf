package export

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/owndir"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/transcript"
)

// Module is the feature.
type Module struct {
	host  *chat.Host
	store sessions
}

// sessions is what the module reads of the state database.
type sessions interface {
	GetSession(ctx context.Context, id string) (state.Session, error)
}

// New builds the module.
func New(h *chat.Host) *Module { return &Module{host: h, store: h.Store()} }

// maxDocument is the largest document a bot may send.
const maxDocument = 50 << 20

// Register adds /export.
func (m *Module) Register(r *chat.Registry) {
	r.Command(chat.Command{Name: "export", Help: "Send this session's conversation as a Markdown file",
		Run: func(c *chat.Chat, in chat.Invocation) { m.export(c, in.Msg.ID) }})
}

// export answers /export.
func (m *Module) export(c *chat.Chat, replyTo int) {
	cfg := c.Config()
	if c.Group() && !cfg.Files.ExportInGroups {
		c.Reply("🔒 /export works in private chats only: everyone in this "+c.ChatWord()+" would read the conversation. "+
			"The operator can allow it here with <code>[files] export_in_groups</code>.", replyTo)
		return
	}
	id := c.Record().SessionID
	p, pl := c.Place(cfg)
	switch {
	case id == "":
		c.Reply("There is no session here to export yet: your next message starts one.", replyTo)
		return
	case p.Remote():
		c.Reply("📝 Project <b>"+render.EscapeHTML(p.Name)+"</b> runs on "+render.EscapeHTML(p.Host)+
			", which keeps its transcripts; untether cannot read them from here, so /export works for projects on this machine only.", replyTo)
		return
	}
	dir := c.SessionDir() // the live CLI's, else where the session runs
	if dir == "" {
		dir = chat.PlaceDir(p, pl)
	}
	home, loc, workdir := cliHome(p, m.host.InheritEnv()), cfg.Telegram.Location(), c.UploadDir(cfg)
	c.Typing()
	c.Offload(func(ctx context.Context) func() {
		f, rel, size, err := m.write(ctx, home, dir, workdir, id, loc)
		if err != nil {
			c.Log().Warn().Err(err).Str("session", id).Msg("/export")
			return func() { c.Reply(failure(err), replyTo) }
		}
		caption := "📝 The conversation of session <code>" + render.EscapeHTML(id) + "</code> · " + render.FormatSize(size)
		return func() {
			// Sent from the descriptor written (the outbox closes it).
			c.SendMedia(outbox.High, outbox.Media{Files: []outbox.MediaFile{{Kind: outbox.MediaDocument,
				Dir: workdir, Path: rel, Name: "claude-session-" + id + ".md", Caption: caption, File: f}}},
				outbox.SendOptions{ReplyTo: outbox.MessageID(replyTo), Tag: "export"})
		}
	})
}

// errTooBig: the document is over what a bot may send.
var errTooBig = errors.New("the document is over the 50 MB a bot may send")

// write exports session id's transcript, with untether's record of it,
// into the workdir's .untether/sent, and returns it open.
func (m *Module) write(ctx context.Context, home, dir, workdir, id string, loc *time.Location) (*os.File, string, int64, error) {
	path, err := transcript.Path(home, dir, transcript.SessionID(id))
	if err != nil {
		return nil, "", 0, err
	}
	md, err := transcript.Export(path, transcript.ExportOptions{Location: loc})
	if err != nil {
		return nil, "", 0, fmt.Errorf("export the transcript: %w", err)
	}
	md += m.record(ctx, id)
	if len(md) > maxDocument {
		return nil, "", 0, errTooBig
	}
	f, rel, err := owndir.WriteSent(workdir, "claude-session-"+id+".md", []byte(md), time.Now())
	if err != nil {
		m.host.OwnDirs().Refused(err)
		return nil, "", 0, err
	}
	return f, rel, int64(len(md)), nil
}

// record is untether's own account of the session, closing the document:
// the transcript carries no cost while the CLI runs.
func (m *Module) record(ctx context.Context, id string) string {
	se, err := m.store.GetSession(ctx, id)
	switch {
	case errors.Is(err, state.ErrNotFound):
		return "\n---\n\n*untether ran no turn of this session: it was started outside untether.*\n"
	case err != nil:
		return "\n---\n\n*untether's record of this session could not be read.*\n"
	}
	return fmt.Sprintf("\n---\n\n*untether ran %s of this session, costing %s in all, as the CLI reported each turn.*\n",
		render.PluralWord(se.Turns, "1 turn", fmt.Sprintf("%d turns", se.Turns)), render.FormatCost(se.CostUSD))
}

// failure is the answer to an /export that failed.
func failure(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "📝 This session has no transcript yet: Claude writes it at the session's first turn."
	case errors.Is(err, errTooBig):
		return "📝 This session's conversation is too long to send: " + err.Error() + "."
	}
	return "⚠️ Could not export this session: " + render.EscapeHTML(err.Error())
}

// cliHome is the HOME the CLI of project p runs with, where its
// transcripts are (transcript.Dir): the project's home, else its env's,
// else the daemon's (inherit is its environment). The places module has
// the same few lines for /continue; modules do not import each other, and
// a door for this alone would be more than the copy.
func cliHome(p config.ProjectSettings, inherit []string) string {
	if p.Home != "" {
		return p.Home
	}
	if v := p.Env["HOME"]; v != "" {
		return v
	}
	for _, kv := range inherit {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			return v
		}
	}
	v, _ := os.UserHomeDir()
	return v
}
