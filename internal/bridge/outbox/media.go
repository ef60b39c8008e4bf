package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/untether/untether/internal/render"
	"github.com/untether/untether/internal/safefs"
)

// Media messages: files from disk sent as a document, a photo, or an album
// of either, through the same queues, pacing, 429 handling and journal as
// text. The files are read when the call is made (and again on each retry),
// never held in memory by the queue. A caller that checked a file hands
// over its open descriptor (MediaFile.File), which is what gets sent: the
// directories untether sends from are writable by Claude's tools, and a
// path opened again later may by then be a link to a secret or a FIFO.
// Only a send replayed from the journal opens its path, through safefs: no
// link anywhere below Dir is followed, and a FIFO or device is refused
// without blocking.

// MediaKind says how a file is sent.
type MediaKind uint8

const (
	// MediaDocument sends the file as is, under its name (sendDocument).
	MediaDocument MediaKind = iota + 1
	// MediaPhoto sends a picture Telegram shows inline and recompresses
	// (sendPhoto): JPEG or PNG, at most 10 MB, width + height ≤ 10000.
	MediaPhoto
)

// MediaFile is one file of a media message.
type MediaFile struct {
	Kind MediaKind
	// Dir is the directory the file is read in; Path and Fallback are
	// relative to it and may not leave it.
	Dir  string
	Path string
	// Fallback is where the file may still be while Path does not exist
	// yet: the caller may move it to Path after enqueueing (so a journaled
	// send names the file's final place before the move happens).
	Fallback string
	// Name is the file name users see (documents); "" means Path's base.
	Name string
	// Caption is Telegram HTML, at most 1024 characters once parsed.
	Caption string
	// File, when set, is the file already open (a regular file the caller
	// checked): it is what is sent, from its first byte on each attempt,
	// and Path and Fallback only name it for a replay after a crash. The
	// outbox owns it from [Outbox.SendMedia] on and closes it once the
	// send is settled. It is not journaled.
	File *os.File `json:"-"`
}

// Media is what a media message carries: one file, or an album of 2–10
// photos or 2–10 documents (Telegram does not mix the two).
type Media struct {
	Files []MediaFile
	// Keyboard is the reply_markup of a single file; albums have none.
	Keyboard any
}

// MediaAPI is the part of the Telegram client media messages need; *bot.Bot
// has it. The API given to [New] must implement it for [Outbox.SendMedia].
type MediaAPI interface {
	SendDocument(ctx context.Context, params *bot.SendDocumentParams) (*models.Message, error)
	SendPhoto(ctx context.Context, params *bot.SendPhotoParams) (*models.Message, error)
	SendMediaGroup(ctx context.Context, params *bot.SendMediaGroupParams) ([]*models.Message, error)
}

var _ MediaAPI = (*bot.Bot)(nil)

// Limits of media messages.
const (
	MaxAlbum      = 10
	MaxCaptionLen = 1024 // UTF-16 units of the parsed caption
	// MediaCallTimeout bounds one media call: an upload of 50 MB needs far
	// longer than a text message.
	MediaCallTimeout = 10 * time.Minute
)

// ErrMediaFile marks a media message whose file cannot be read (gone,
// unreadable, outside its directory): retrying cannot help.
var ErrMediaFile = errors.New("media file unavailable")

// KindMedia is the journal kind of a journaled media send.
const KindMedia = "media"

// SendMedia enqueues a media message, like [Outbox.Send]: it returns the
// handle at once; Sent() resolves with the id of the (first) message. A
// High send is journaled first. Files are checked when the call is made;
// one that cannot be read fails the send with [ErrMediaFile].
//
// When flood control trips in the middle of an album, Telegram keeps the
// items before it: the outbox waits the retry_after it named and sends only
// the rest. A crash between the two replays the whole album (at least once).
func (o *Outbox) SendMedia(ctx context.Context, key ChatKey, prio Priority, media Media, opts SendOptions) *Message {
	m := &Message{key: key, tag: opts.Tag, sent: newPending()}
	if open := openFiles(media.Files); len(open) > 0 {
		m.sent.after = func() { closeAll(open) }
	}
	kb, err := validateMedia(key, media)
	if err != nil {
		m.unsent = err
		m.sent.resolve(Result{}, err)
		return m
	}
	op := &op{
		kind: kindSend, prio: prio, key: key, msg: m, text: media.Files[0].Caption, kb: kb,
		replyTo: opts.ReplyTo, silent: opts.Silent, pending: m.sent, log: ctxLogger(ctx),
		media: append([]MediaFile(nil), media.Files...),
	}
	if o.opt.Journal != nil && prio == High && !o.closing.Load() {
		o.journalSaveMedia(ctx, op, opts.Tag)
	}
	o.enqueue(op)
	return m
}

func validateMedia(key ChatKey, media Media) (json.RawMessage, error) {
	n := len(media.Files)
	switch {
	case key.Chat == 0:
		return nil, fmt.Errorf("%w: chat id 0", ErrInvalid)
	case n == 0:
		return nil, fmt.Errorf("%w: no files", ErrInvalid)
	case n > MaxAlbum:
		return nil, fmt.Errorf("%w: %d files; an album has at most %d", ErrInvalid, n, MaxAlbum)
	case n > 1 && media.Keyboard != nil:
		return nil, fmt.Errorf("%w: albums have no keyboard", ErrInvalid)
	}
	for i, f := range media.Files {
		switch {
		case f.Kind != MediaDocument && f.Kind != MediaPhoto:
			return nil, fmt.Errorf("%w: file %d has no kind", ErrInvalid, i)
		case f.Kind != media.Files[0].Kind:
			return nil, fmt.Errorf("%w: an album is all photos or all documents", ErrInvalid)
		case f.Dir == "" || !filepath.IsAbs(f.Dir):
			return nil, fmt.Errorf("%w: file %d: directory %q is not absolute", ErrInvalid, i, f.Dir)
		case !filepath.IsLocal(f.Path) || (f.Fallback != "" && !filepath.IsLocal(f.Fallback)):
			return nil, fmt.Errorf("%w: file %d: %q is not a path inside its directory", ErrInvalid, i, f.Path)
		case render.UTF16Len(plainText(f.Caption)) > MaxCaptionLen:
			return nil, fmt.Errorf("%w: file %d: caption longer than %d characters", ErrInvalid, i, MaxCaptionLen)
		}
	}
	if media.Keyboard == nil {
		return nil, nil
	}
	return validate(key, Content{Text: "-", Keyboard: media.Keyboard})
}

// timeoutFor is how long one call of op may take.
func (o *Outbox) timeoutFor(op *op) time.Duration {
	if op.media != nil {
		return max(o.opt.CallTimeout, MediaCallTimeout)
	}
	return o.opt.CallTimeout
}

// openFiles lists the descriptors handed over with files.
func openFiles(files []MediaFile) []*os.File {
	var out []*os.File
	for _, f := range files {
		if f.File != nil {
			out = append(out, f.File)
		}
	}
	return out
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// mediaReader is what one attempt uploads of f: the descriptor handed
// over, read from its start (ReadAt, so attempts never share an offset),
// or else the file f names, opened now (and closed by the caller).
func mediaReader(f MediaFile) (io.Reader, *os.File, error) {
	if f.File != nil {
		return io.NewSectionReader(f.File, 0, math.MaxInt64), nil, nil
	}
	fh, err := openMedia(f)
	return fh, fh, err
}

// openMedia opens f through safefs: at Path, else at Fallback, else at
// Path again (the caller's move from Fallback to Path may have happened in
// between; a rename is atomic, so one of the three finds it). Nothing but
// a regular file reached without a link is opened, and opening never
// blocks.
func openMedia(f MediaFile) (*os.File, error) {
	dir, err := safefs.OpenBase(f.Dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMediaFile, err)
	}
	defer dir.Close()
	tries := []string{f.Path}
	if f.Fallback != "" {
		tries = append(tries, f.Fallback, f.Path)
	}
	for _, p := range tries {
		fh, err := dir.OpenFile(p)
		if err == nil {
			return fh, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %w", ErrMediaFile, err)
		}
	}
	return nil, fmt.Errorf("%w: %s: %w", ErrMediaFile, f.Path, fs.ErrNotExist)
}

func (f MediaFile) shownName() string {
	if f.Name != "" {
		return f.Name
	}
	return filepath.Base(f.Path)
}

// callMedia makes the one Telegram request a media op stands for.
func (o *Outbox) callMedia(ctx context.Context, op *op) (MessageID, error) {
	api, ok := o.api.(MediaAPI)
	if !ok {
		return 0, fmt.Errorf("%w: the Telegram client cannot send media", ErrMediaFile)
	}
	mode := models.ParseModeHTML
	caption := func(s string) string {
		if op.plain {
			return plainText(s)
		}
		return s
	}
	if op.plain {
		mode = ""
	}
	thread := op.key.Thread
	if thread == 1 {
		thread = 0 // the General topic (see call)
	}
	var reply *models.ReplyParameters
	if op.replyTo != 0 {
		reply = &models.ReplyParameters{MessageID: int(op.replyTo), AllowSendingWithoutReply: true}
	}
	var opened []*os.File
	defer func() { closeAll(opened) }()
	files := make([]io.Reader, len(op.media))
	for i, mf := range op.media {
		r, fh, err := mediaReader(mf)
		if err != nil {
			return 0, err
		}
		if fh != nil {
			opened = append(opened, fh)
		}
		files[i] = r
	}
	if len(op.media) == 1 {
		mf, fh := op.media[0], files[0]
		var markup models.ReplyMarkup
		if len(op.kb) > 0 {
			markup = op.kb
		}
		var msg *models.Message
		var err error
		if mf.Kind == MediaPhoto {
			msg, err = api.SendPhoto(ctx, &bot.SendPhotoParams{ChatID: op.key.Chat, MessageThreadID: thread,
				Photo: &models.InputFileUpload{Filename: mf.shownName(), Data: fh}, Caption: caption(mf.Caption), ParseMode: mode,
				DisableNotification: op.silent, ReplyParameters: reply, ReplyMarkup: markup})
		} else {
			msg, err = api.SendDocument(ctx, &bot.SendDocumentParams{ChatID: op.key.Chat, MessageThreadID: thread,
				Document: &models.InputFileUpload{Filename: mf.shownName(), Data: fh}, Caption: caption(mf.Caption), ParseMode: mode,
				DisableNotification: op.silent, ReplyParameters: reply, ReplyMarkup: markup})
		}
		if err != nil {
			return 0, err
		}
		if msg == nil || msg.ID == 0 {
			return 0, errNoMessageID
		}
		return MessageID(msg.ID), nil
	}
	names := attachNames(op.media)
	items := make([]models.InputMedia, len(op.media))
	for i, mf := range op.media {
		if mf.Kind == MediaPhoto {
			items[i] = &models.InputMediaPhoto{Media: "attach://" + names[i], MediaAttachment: files[i], Caption: caption(mf.Caption), ParseMode: mode}
		} else {
			items[i] = &models.InputMediaDocument{Media: "attach://" + names[i], MediaAttachment: files[i], Caption: caption(mf.Caption), ParseMode: mode}
		}
	}
	msgs, err := api.SendMediaGroup(ctx, &bot.SendMediaGroupParams{ChatID: op.key.Chat, MessageThreadID: thread,
		Media: items, DisableNotification: op.silent, ReplyParameters: reply})
	if err != nil {
		if n, retry, ok := midAlbumFlood(err); ok && n > 1 && n <= len(op.media) {
			// Items before #n are delivered: wait, then send the rest
			// (as one file, if only one is left).
			op.media, op.replyTo = op.media[n-1:], 0
			return 0, &bot.TooManyRequestsError{Message: err.Error(), RetryAfter: retry}
		}
		return 0, err
	}
	if len(msgs) == 0 || msgs[0] == nil || msgs[0].ID == 0 {
		return 0, errNoMessageID
	}
	return MessageID(msgs[0].ID), nil
}

// attachNames are the multipart names of an album's files: for documents
// the name users see, so each must be unique, and printable ASCII-safe for
// the form's headers.
func attachNames(files []MediaFile) []string {
	seen := map[string]bool{}
	out := make([]string, len(files))
	for i, f := range files {
		name := f.shownName()
		if strings.ContainsFunc(name, func(r rune) bool { return !unicode.IsPrint(r) || r == '"' || r == '\\' || r == '/' }) {
			name = "file" + strconv.Itoa(i+1) + filepath.Ext(name)
		}
		for base, ext, k := strings.TrimSuffix(name, filepath.Ext(name)), filepath.Ext(name), 2; seen[name]; k++ {
			name = base + "-" + strconv.Itoa(k) + ext
		}
		seen[name] = true
		out[i] = name
	}
	return out
}

var midAlbumRe = regexp.MustCompile(`failed to send message #(\d+) with the error message \\?"Too Many Requests: retry after (\d+)`)

// midAlbumFlood reads the 400 Telegram answers when flood control trips at
// item n of an album (go-telegram/bot maps it to ErrorBadRequest, not to a
// TooManyRequestsError).
func midAlbumFlood(err error) (n, retryAfter int, ok bool) {
	if !errors.Is(err, bot.ErrorBadRequest) {
		return 0, 0, false
	}
	m := midAlbumRe.FindStringSubmatch(err.Error())
	if m == nil {
		return 0, 0, false
	}
	n, _ = strconv.Atoi(m[1])
	retryAfter, _ = strconv.Atoi(m[2])
	return n, retryAfter, true
}

// mediaRecord is the journal payload of a media send. Fields are only ever
// added.
type mediaRecord struct {
	V        int             `json:"v"`
	Chat     int64           `json:"chat"`
	Thread   int             `json:"thread,omitempty"`
	Files    []MediaFile     `json:"files"`
	Keyboard json.RawMessage `json:"keyboard,omitempty"`
	ReplyTo  MessageID       `json:"reply_to,omitempty"`
	Silent   bool            `json:"silent,omitempty"`
	Tag      string          `json:"tag,omitempty"`
}

func (o *Outbox) journalSaveMedia(ctx context.Context, op *op, tag string) {
	payload, err := json.Marshal(mediaRecord{V: 1, Chat: op.key.Chat, Thread: op.key.Thread, Files: op.media,
		Keyboard: op.kb, ReplyTo: op.replyTo, Silent: op.silent, Tag: tag})
	if err == nil {
		var id JournalID
		id, err = o.opt.Journal.Save(ctx, op.key, KindMedia, payload)
		op.journal = id
	}
	if err != nil {
		o.stats.journalErrs.Add(1)
		o.logger(op).Error().Err(err).Int64("chat_id", op.key.Chat).Msg("Could not journal outgoing media")
	}
}

func decodeMedia(e JournalEntry) (mediaRecord, error) {
	var rec mediaRecord
	return rec, decodeEntry(e, KindMedia, &rec)
}

// MediaFiles returns the files of a journaled media send (nil for other
// entries), so the bridge can finish moving them before [Outbox.Restore].
func MediaFiles(e JournalEntry) []MediaFile {
	rec, err := decodeMedia(e)
	if err != nil {
		return nil
	}
	return rec.Files
}

// restoreMedia re-enqueues a journaled media send; see [Outbox.Restore].
func (o *Outbox) restoreMedia(ctx context.Context, e JournalEntry) (*Message, error) {
	rec, err := decodeMedia(e)
	if err != nil {
		return nil, err
	}
	key := ChatKey{Chat: rec.Chat, Thread: rec.Thread}
	m := &Message{key: key, tag: rec.Tag, sent: newPending()}
	media := Media{Files: rec.Files}
	if len(rec.Keyboard) > 0 {
		media.Keyboard = rec.Keyboard
	}
	kb, err := validateMedia(key, media)
	if err != nil {
		m.unsent = err
		m.sent.resolve(Result{}, err)
		return m, err
	}
	o.enqueue(&op{kind: kindSend, prio: High, key: key, msg: m, text: rec.Files[0].Caption, kb: kb,
		replyTo: rec.ReplyTo, silent: rec.Silent, pending: m.sent, log: ctxLogger(ctx), journal: e.ID, media: rec.Files})
	return m, nil
}

// mediaTag is EntryTag for media entries.
func mediaTag(e JournalEntry) string {
	rec, err := decodeMedia(e)
	if err != nil {
		return ""
	}
	return rec.Tag
}
