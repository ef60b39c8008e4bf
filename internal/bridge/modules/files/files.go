package files

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/outbox"
	"github.com/untether/untether/internal/bridge/owndir"
	"github.com/untether/untether/internal/bridge/state"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// chatOutbox is a chat's outbox directory, relative to the workdir:
// .untether/outbox/<chat id>, or <chat id>_<topic id> in a forum topic.
func chatOutbox(key state.ChatKey) string {
	name := strconv.FormatInt(int64(key.Chat), 10)
	if key.Thread != 0 {
		name += "_" + strconv.Itoa(int(key.Thread))
	}
	return owndir.OutboxRoot + "/" + name
}

// Telegram's upload limits for bots (telegram-media.md §0).
const (
	maxPhotoBytes    = 10 << 20
	maxDocumentBytes = 50 << 20
	maxPhotoSides    = 10000
	maxPhotoRatio    = 20
)

// tagFile is the journal tag of files sent to the chat.
const tagFile = "file"

// outboxPrompt is what Claude is told about its outbox directory.
func outboxPrompt(workdir, dir string) string {
	return "untether (the Telegram bridge you are talking through) delivers files: any file you write directly " +
		"in " + path.Join(workdir, dir) + "/ (relative to the project: " + dir + "/) is sent to the user's " +
		"Telegram chat when your turn ends: PNG and JPEG pictures up to 10 MB as photos, anything else as a document " +
		"up to 50 MB. Use it when the user asks you to send, export or show them a file. Sent files move to " +
		owndir.Sent + "/. Subdirectories and symbolic links are not sent."
}

// withOutboxPrompt adds the outbox note to the CLI's arguments, merging it
// into an --append-system-prompt the operator configured in extra_args.
func withOutboxPrompt(args []string, workdir string, key state.ChatKey) []string {
	note := outboxPrompt(workdir, chatOutbox(key))
	out := slices.Clone(args)
	for i, a := range out {
		switch {
		case a == "--append-system-prompt" && i+1 < len(out):
			out[i+1] += "\n\n" + note
			return out
		case strings.HasPrefix(a, "--append-system-prompt="):
			out[i] += "\n\n" + note
			return out
		}
	}
	return append(out, "--append-system-prompt", note)
}

// chunkFiles groups files into albums of at most outbox.MaxAlbum.
func chunkFiles(files []outbox.MediaFile) [][]outbox.MediaFile {
	var out [][]outbox.MediaFile
	for len(files) > 0 {
		n := min(len(files), outbox.MaxAlbum)
		out = append(out, files[:n])
		files = files[n:]
	}
	return out
}

// settleMovedFiles finishes the moves a crash interrupted: a journaled file
// still in a chat's outbox goes to the place in owndir.Sent the journal names,
// before the journal is replayed, so the next turn does not find it again.
// Only a regular file is moved, only from an outbox directory to owndir.Sent,
// and only through real directories: the journal is in the state
// database, and the directories are the project's.
func settleMovedFiles(entries []outbox.JournalEntry) {
	for _, e := range entries {
		for _, f := range outbox.MediaFiles(e) {
			if f.Fallback == "" || path.Dir(path.Dir(f.Fallback)) != owndir.OutboxRoot || path.Dir(f.Path) != owndir.Sent {
				continue
			}
			from, err := owndir.Open(f.Dir, path.Dir(f.Fallback), false)
			if err != nil {
				continue
			}
			if to, err := owndir.Open(f.Dir, owndir.Sent, true); err == nil {
				name := path.Base(f.Fallback)
				_, taken := to.Lstat(path.Base(f.Path))
				if info, err := from.Lstat(name); err == nil && info.Mode().IsRegular() && errors.Is(taken, fs.ErrNotExist) {
					_ = from.Rename(name, to, path.Base(f.Path))
				}
				to.Close()
			}
			from.Close()
		}
	}
}

// pruneSent deletes files sent to the chat longer than [files]
// outbox_keep ago.
func (m *Module) pruneSent(cfg *config.Config, now time.Time) {
	for _, dir := range chat.ProjectDirs(cfg) {
		n, err := owndir.PruneDir(dir, owndir.Sent, cfg.Files.OutboxKeep.Std(), now)
		if m.dirs.Refused(err) {
			continue // logged once; nothing is pruned through it
		}
		if err != nil {
			m.log.Warn().Err(err).Msg("prune old sent files")
		} else if n > 0 {
			m.log.Info().Int("files", n).Dur("keep", cfg.Files.OutboxKeep.Std()).Msg("pruned old sent files")
		}
	}
}

// Module is the feature.
type Module struct {
	host  *chat.Host
	dirs  *owndir.Reports
	log   *zerolog.Logger
	state chat.Slot[chatFiles]
}

// chatFiles is a chat's state; the actor owns it, but zipping.
type chatFiles struct {
	// outboxDirs are the directories the last turn's end found in the
	// chat's outbox, already reported (scan.go).
	outboxDirs map[string]bool
	// zipping is set while a /get of a directory is zipped: one at a
	// time per chat (get.go). Set on the actor, cleared off it.
	zipping atomic.Bool
}

// New builds the module.
func New(h *chat.Host) *Module { return &Module{host: h, dirs: h.OwnDirs(), log: h.Logger()} }

// Register adds /get, Claude's outbox (the prompt that tells Claude of it,
// its delivery after each turn, and its journal's replay), linked files,
// and 📄 Full diff on approvals.
func (m *Module) Register(r *chat.Registry) {
	m.state = chat.NewSlot[chatFiles](r)
	r.Command(chat.Command{Name: "get", Help: "Send a file from the project: /get PATH",
		Run: func(c *chat.Chat, in chat.Invocation) { m.getCommand(c, in.Args, in.Msg) }})
	r.OnJournalReplay(settleMovedFiles)
	r.OnSpawn(func(c *chat.Chat, rc *runner.Config, _ chat.Place) {
		if rc.Remote == nil { // only a local project's outbox can be delivered
			rc.ExtraArgs = withOutboxPrompt(rc.ExtraArgs, rc.Workdir, c.Key())
		}
	})
	r.OnTurnEnd(func(c *chat.Chat, e chat.TurnEnd) { m.deliverOutboxIn(c, e.Workdir, e.ReplyTo) })
	r.OnTurnEnd(func(c *chat.Chat, e chat.TurnEnd) { m.sendLinkedFiles(c, e) }) // links.go
	r.OnApproval(func(c *chat.Chat, a *chat.Approval, b *render.ApprovalButtons) {
		// Only for a CLI on this machine: the diff is written to its
		// directory before it is sent, which a remote project does not have.
		if c.SessionDir() != "" {
			b.FullDiff = chat.CallbackData(btnFullDiff, a.Token())
		}
	})
	r.Button(btnFullDiff, chat.Button{Ack: "Sending the diff…", Press: func(c *chat.Chat, p chat.Press) {
		if a, ok := c.Approval(p.Token); ok {
			m.sendFullDiff(c, a, p.Message)
		}
	}})
}

// Start prunes old uploads and sent files now and then once a day, with
// the [files] keep and outbox_keep of the moment (they are reloadable).
func (m *Module) Start(ctx context.Context) {
	chat.RunDaily(ctx, func(now time.Time) {
		cfg := m.host.Config()
		for _, dir := range chat.ProjectDirs(cfg) {
			n, err := owndir.PruneUploads(dir, cfg.Files.Keep.Std(), now)
			if m.dirs.Refused(err) {
				continue // logged once; nothing is pruned through it
			}
			if err != nil {
				m.log.Warn().Err(err).Msg("prune old uploads")
			} else if n > 0 {
				m.log.Info().Int("files", n).Dur("keep", cfg.Files.Keep.Std()).Msg("pruned old uploads")
			}
		}
		m.pruneSent(cfg, now)
	})
}
