package phone

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge/chat"
	"github.com/untether/untether/internal/bridge/owndir"
	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/runner"
)

// Albums and forwards arrive as several messages that mean one thing. The
// parts of an album share a media_group_id and come without an end marker;
// forwarded messages come one by one, often followed by the user's comment.
// The chat collects them until none came for [telegram] album_wait (or
// forward_wait), then sends them to Claude as one prompt with all their
// pictures and files. A comment right after forwards ends the collection at
// once. Anything else that arrives meanwhile first sends what was collected,
// so the order of prompts is kept.
//
// Each part's update stays unconfirmed until the prompt is handed on, so a
// crash while collecting replays every part.

type batchKind uint8

const (
	batchAlbum batchKind = iota + 1
	batchForward
)

// batch is an album or forwards being collected.
type batch struct {
	kind    batchKind
	group   string // the album's media_group_id
	parts   []*models.Message
	comment *models.Message // the text sent right after forwards
	updates []int64
	timer   *time.Timer
}

// maxBatchParts bounds a collection: Telegram albums have at most 10 parts,
// and a longer run of forwards goes out in several prompts.
const maxBatchParts = 20

// batchKindOf says whether m is part of an album or a forward that can be
// collected: text, a photo or a document.
func batchKindOf(m *models.Message) (batchKind, string) {
	_, isFile := attachmentOf(m)
	switch {
	case m.MediaGroupID != "" && isFile:
		return batchAlbum, m.MediaGroupID
	case m.ForwardOrigin != nil && (isFile || m.Text != ""):
		return batchForward, ""
	}
	return 0, ""
}

// collect takes m into the batch being collected, starting one if m is an
// album part or a forward, and reports whether it did. Another message
// first sends what was collected.
func (ph *Module) collect(c *chat.Chat, m *models.Message) bool {
	kind, group := batchKindOf(m)
	b := ph.state.Get(c).batch
	if b != nil && kind == 0 && b.kind == batchForward && b.comment == nil && m.Text != "" && m.ForwardOrigin == nil {
		b.comment = m
		b.updates = append(b.updates, c.TakeUpdate())
		ph.flushBatch(c)
		return true
	}
	if b != nil && (kind != b.kind || group != b.group || len(b.parts) >= maxBatchParts) {
		ph.flushBatch(c)
		b = nil
	}
	if kind == 0 {
		return false
	}
	cfg := c.Config()
	wait := cfg.Telegram.AlbumWait.Std()
	if kind == batchForward {
		wait = cfg.Telegram.ForwardWait.Std()
	}
	if b == nil {
		b = &batch{kind: kind, group: group}
		ph.state.Get(c).batch = b
	}
	b.parts = append(b.parts, m)
	b.updates = append(b.updates, c.TakeUpdate())
	if b.timer != nil {
		b.timer.Stop()
	}
	// The wait restarts with every part: there is no end marker.
	b.timer = time.AfterFunc(wait, func() {
		c.Post(func() {
			if ph.state.Get(c).batch == b {
				ph.flushBatch(c)
			}
		})
	})
	return true
}

// flushBatch sends what was collected to Claude as one message.
func (ph *Module) flushBatch(c *chat.Chat) {
	b := ph.state.Get(c).batch
	if b == nil {
		return
	}
	ph.state.Get(c).batch = nil
	if b.timer != nil {
		b.timer.Stop()
	}
	slices.SortFunc(b.parts, func(x, y *models.Message) int { return x.ID - y.ID }) // updates may come out of order
	replyTo := b.parts[0].ID
	cfg := c.Config()
	workdir := c.UploadDir(cfg) // "" for a project on another host
	var atts []*attachment
	for _, p := range b.parts {
		a, ok := attachmentOf(p)
		if !ok {
			atts = append(atts, nil)
			continue
		}
		a.caption, a.workdir, a.limitMB = "", workdir, cfg.Files.MaxUploadMB
		if a.size > cfg.Files.MaxUploadBytes() {
			c.Reply((&uploadError{owndir.TooBig(a.limitMB)}).UserText(), p.ID)
			c.FinishUpdates(b.updates)
			return
		}
		atts = append(atts, &a)
	}
	// Every update but the last is confirmed now; the last one goes with
	// the message, confirmed once it is handed on like any other.
	c.FinishUpdates(b.updates[:len(b.updates)-1])
	log := *c.Log()
	label := fmt.Sprintf("an album of %d", len(b.parts))
	if b.kind == batchForward {
		label = fmt.Sprintf("%d forwarded %s", len(b.parts), render.PluralWord(len(b.parts), "message", "messages"))
	}
	c.SendOutgoing(chat.NewOutgoing(runner.UserInput{}, replyTo, chat.SenderOf(b.parts[0])).WithUpdate(b.updates[len(b.updates)-1]).WithLabel(label).
		PrepareWith(func(ctx context.Context) (runner.UserInput, error) {
			in, err := ph.batchInput(ctx, b, atts, log)
			if err != nil {
				log.Warn().Err(err).Msg("album or forwards")
				return in, &uploadError{err}
			}
			return in, nil
		}))
}

// batchInput builds the prompt of a batch, downloading its files; it runs
// off the actor.
func (ph *Module) batchInput(ctx context.Context, bt *batch, atts []*attachment, log zerolog.Logger) (runner.UserInput, error) {
	var in runner.UserInput
	var captions, notes, blocks []string
	pictures, files := 0, 0
	for i, p := range bt.parts {
		text := firstNonEmptyString(p.Text, p.Caption)
		note := ""
		if a := atts[i]; a != nil {
			part, err := ph.attachmentInput(ctx, *a, log)
			if err != nil {
				return in, fmt.Errorf("part %d of %d: %w", i+1, len(bt.parts), err)
			}
			if len(part.Images) > 0 {
				pictures += len(part.Images)
				in.Images = append(in.Images, part.Images...)
			} else {
				files++
				note = part.Text // where the file was saved
			}
		}
		if bt.kind == batchAlbum {
			if text != "" {
				captions = append(captions, text)
			}
			if note != "" {
				notes = append(notes, note)
			}
			continue
		}
		body := strings.TrimSpace(text + "\n" + note)
		if body == "" {
			body = "(a picture)"
		}
		blocks = append(blocks, "── Forwarded "+forwardSource(p.ForwardOrigin)+" ──\n"+body)
	}
	if bt.kind == batchAlbum {
		parts := []string{fmt.Sprintf("(The user sent an album: %s.)", albumCounts(pictures, files))}
		if len(captions) > 0 {
			parts = append(parts, strings.Join(captions, "\n"))
		}
		if len(notes) > 0 {
			parts = append(parts, strings.Join(notes, "\n"))
		}
		in.Text = strings.Join(parts, "\n\n")
		return in, nil
	}
	n := len(bt.parts)
	in.Text = fmt.Sprintf("(The user forwarded %d %s.)\n\n", n, render.PluralWord(n, "message", "messages")) + strings.Join(blocks, "\n\n")
	if bt.comment != nil {
		in.Text += "\n\n── The user's comment ──\n" + bt.comment.Text
	}
	return in, nil
}

func albumCounts(pictures, files int) string {
	var parts []string
	if pictures > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", pictures, render.PluralWord(pictures, "picture", "pictures")))
	}
	if files > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", files, render.PluralWord(files, "file", "files")))
	}
	return strings.Join(parts, " and ")
}

func firstNonEmptyString(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// forwardSource says who a forwarded message came from, as far as
// Telegram tells: "from Bob (@bob), 6 May 2025 07:08 UTC".
func forwardSource(o *models.MessageOrigin) string {
	if o == nil {
		return "from an unknown sender"
	}
	var who string
	var date int
	switch o.Type {
	case models.MessageOriginTypeUser:
		if u := o.MessageOriginUser; u != nil {
			who, date = senderName(u.SenderUser), u.Date
		}
	case models.MessageOriginTypeHiddenUser:
		if u := o.MessageOriginHiddenUser; u != nil {
			who, date = u.SenderUserName, u.Date
			if who != "" {
				who += " (their account is hidden)"
			}
		}
	case models.MessageOriginTypeChat:
		if ch := o.MessageOriginChat; ch != nil {
			who, date = chatName("the group", ch.SenderChat), ch.Date
			if ch.AuthorSignature != nil && *ch.AuthorSignature != "" {
				who += ", signed " + *ch.AuthorSignature
			}
		}
	case models.MessageOriginTypeChannel:
		if ch := o.MessageOriginChannel; ch != nil {
			who, date = chatName("the channel", ch.Chat), ch.Date
			if ch.AuthorSignature != nil && *ch.AuthorSignature != "" {
				who += ", signed " + *ch.AuthorSignature
			}
		}
	}
	if who == "" {
		who = "an unknown sender"
	}
	s := "from " + who
	if date > 0 {
		s += ", " + time.Unix(int64(date), 0).UTC().Format("2 Jan 2006 15:04 MST")
	}
	return s
}

func senderName(u models.User) string {
	name := strings.TrimSpace(u.FirstName + " " + u.LastName)
	if u.Username != "" {
		if name == "" {
			return "@" + u.Username
		}
		return name + " (@" + u.Username + ")"
	}
	if name == "" {
		return fmt.Sprintf("user %d", u.ID)
	}
	return name
}

func chatName(what string, ch models.Chat) string {
	name := what
	if ch.Title != "" {
		name += " " + ch.Title
	}
	if ch.Username != "" {
		name += " (@" + ch.Username + ")"
	}
	return name
}
