package telegramtest

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// What users send besides text, photos and documents: voice notes, audio
// files, video notes, albums, forwards, quoting replies and edits.

// file_path directories of the media kinds, as Telegram names them.
const (
	dirVoice     = "voice"
	dirAudio     = "music"
	dirVideoNote = "video_notes"
)

func (f *storedFile) media() *Media {
	return &Media{FileID: f.id, FileName: f.name, MimeType: f.mime, Duration: f.duration, Data: f.data}
}

func wireMediaOf(w *wireMessage, m *message) {
	switch {
	case m.Voice != nil:
		v := m.Voice
		w.Voice = &wireVoice{FileID: v.FileID, FileUniqueID: m.fileUniqueID, Duration: v.Duration, MimeType: v.MimeType, FileSize: len(v.Data)}
	case m.Audio != nil:
		a := m.Audio
		w.Audio = &wireAudio{FileID: a.FileID, FileUniqueID: m.fileUniqueID, Duration: a.Duration, FileName: a.FileName, MimeType: a.MimeType, FileSize: len(a.Data)}
	case m.VideoNote != nil:
		v := m.VideoNote
		w.VideoNote = &wireVideoNote{FileID: v.FileID, FileUniqueID: m.fileUniqueID, Length: 240, Duration: v.Duration, FileSize: len(v.Data)}
	}
}

func wireOriginOf(o *ForwardOrigin) *wireOrigin {
	if o == nil {
		return nil
	}
	w := &wireOrigin{Type: o.Type, Date: unixOrZero(o.Date)}
	chat := &wireChat{ID: int64(o.ChatID), Title: o.ChatTitle, Username: o.ChatUsername}
	switch o.Type {
	case "user":
		u := o.SenderUser
		if u.FirstName == "" {
			u.FirstName = "User" + strconv.FormatInt(int64(u.ID), 10)
		}
		wu := u.wire()
		w.SenderUser = &wu
	case "hidden_user":
		w.SenderUserName = o.SenderUserName
	case "chat":
		chat.Type = string(Supergroup)
		w.SenderChat, w.AuthorSignature = chat, o.AuthorSignature
	case "channel":
		chat.Type = "channel"
		w.Chat, w.MessageID, w.AuthorSignature = chat, 1, o.AuthorSignature
	}
	return w
}

// quotePosition is where a reply's quote starts in the message it replies
// to, in UTF-16 units.
func quotePosition(c *chatState, m *message) int {
	target := c.messages[m.ReplyTo]
	if target == nil {
		return 0
	}
	i := strings.Index(target.Text, m.Quote)
	if i < 0 {
		return 0
	}
	return utf16Len(target.Text[:i])
}

// Forwarded marks a message as forwarded from origin (its Date defaults to
// the fake's now). The message's sender is still the user who forwarded it.
func Forwarded(origin ForwardOrigin) UserOption {
	return func(u *userMsg) { u.forward = &origin }
}

// Quoting makes a reply (with [ReplyingTo]) quote part of the message it
// replies to; quote must occur in that message's text.
func Quoting(quote string) UserOption { return func(u *userMsg) { u.quote = quote } }

// InAlbum gives the message a media_group_id. [Server.UserSendsAlbum] is the
// usual way to send an album.
func InAlbum(id string) UserOption { return func(u *userMsg) { u.mediaGroup = id } }

// UserSendsVoice posts a voice note (OGG/Opus bytes, as Telegram clients
// record them) lasting seconds, with an optional caption.
func (s *Server) UserSendsVoice(chat ChatID, user User, ogg []byte, seconds int, caption string, opts ...UserOption) Message {
	s.t.Helper()
	f := &storedFile{mime: "audio/ogg", data: bytes.Clone(ogg), duration: seconds, dir: dirVoice, ext: "oga"}
	m, err := s.postAsUser(chat, user, userContent{text: caption, files: []*storedFile{f}}, opts)
	if err != nil {
		s.t.Fatalf("telegramtest: UserSendsVoice: %v", err)
	}
	return m
}

// UserSendsAudio posts an audio file (a music file, not a voice note).
func (s *Server) UserSendsAudio(chat ChatID, user User, filename, mimeType string, data []byte, seconds int, caption string, opts ...UserOption) Message {
	s.t.Helper()
	if mimeType == "" {
		mimeType = mimeByName(filename)
	}
	f := &storedFile{name: filename, mime: mimeType, data: bytes.Clone(data), duration: seconds, dir: dirAudio, ext: safeExt(filename)}
	m, err := s.postAsUser(chat, user, userContent{text: caption, files: []*storedFile{f}}, opts)
	if err != nil {
		s.t.Fatalf("telegramtest: UserSendsAudio: %v", err)
	}
	return m
}

// UserSendsVideoNote posts a round video message (MP4 bytes). Video notes
// carry no caption and no MIME type.
func (s *Server) UserSendsVideoNote(chat ChatID, user User, mp4 []byte, seconds int, opts ...UserOption) Message {
	s.t.Helper()
	f := &storedFile{data: bytes.Clone(mp4), duration: seconds, dir: dirVideoNote, ext: "mp4"}
	m, err := s.postAsUser(chat, user, userContent{files: []*storedFile{f}}, opts)
	if err != nil {
		s.t.Fatalf("telegramtest: UserSendsVideoNote: %v", err)
	}
	return m
}

// AlbumItem is one part of an album: Photo bytes, or a document.
type AlbumItem struct {
	Photo    []byte
	FileName string
	MimeType string
	Data     []byte
}

// UserSendsAlbum posts 2–10 photos or documents as one album: one message
// and one update per item, sharing a media_group_id, the caption on the
// first, the way Telegram clients send them. opts apply to every item.
func (s *Server) UserSendsAlbum(chat ChatID, user User, items []AlbumItem, caption string, opts ...UserOption) []Message {
	s.t.Helper()
	if len(items) < 2 || len(items) > 10 {
		s.t.Fatalf("telegramtest: UserSendsAlbum: an album has 2 to 10 items, not %d", len(items))
	}
	s.mu.Lock()
	s.nextAlbum++
	group := strconv.FormatInt(13800000000000000+s.nextAlbum, 10)
	s.mu.Unlock()
	out := make([]Message, 0, len(items))
	for i, it := range items {
		var files []*storedFile
		if it.Photo != nil {
			sizes, err := photoFiles(it.Photo)
			if err != nil {
				s.t.Fatalf("telegramtest: UserSendsAlbum item %d: %v", i, err)
			}
			files = sizes
		} else {
			mt := it.MimeType
			if mt == "" {
				mt = mimeByName(it.FileName)
			}
			files = []*storedFile{newDocumentFile(it.FileName, mt, bytes.Clone(it.Data))}
		}
		text := ""
		if i == 0 {
			text = caption
		}
		m, err := s.postAsUser(chat, user, userContent{text: text, files: files}, append(append([]UserOption(nil), opts...), InAlbum(group)))
		if err != nil {
			s.t.Fatalf("telegramtest: UserSendsAlbum item %d: %v", i, err)
		}
		out = append(out, m)
	}
	return out
}

// UserEdits changes the text (or caption) of a user's message and queues an
// "edited_message" update carrying it with edit_date set, as Telegram does
// when a user edits a message. Telegram only sends it when allowed_updates
// includes edited_message (or is left at its default).
func (s *Server) UserEdits(chat ChatID, msg MessageID, text string) Message {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[chat]
	if c == nil {
		s.t.Fatalf("telegramtest: UserEdits: chat %d is not registered", chat)
	}
	m := c.messages[msg]
	switch {
	case m == nil || m.Deleted:
		s.t.Fatalf("telegramtest: UserEdits: no message %d in chat %d", msg, chat)
	case m.FromBot:
		s.t.Fatalf("telegramtest: UserEdits: message %d is the bot's", msg)
	}
	m.Raw, m.Text, m.Entities = text, text, commandEntities(text)
	m.EditDate = s.now()
	m.EditCount++
	s.enqueueLocked("edited_message", wireUpdate{EditedMessage: s.wireMessageLocked(c, m, 0)}, Update{Message: m.copy()})
	return m.copy()
}

// String describes an origin the way a test failure should show it.
func (o ForwardOrigin) String() string {
	switch o.Type {
	case "user":
		return fmt.Sprintf("user %d", o.SenderUser.ID)
	case "hidden_user":
		return "hidden user " + o.SenderUserName
	}
	return o.Type + " " + o.ChatTitle
}
