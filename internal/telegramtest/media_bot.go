package telegramtest

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// sendPhoto and sendMediaGroup: the Bot API's photo and album uploads,
// with the limits the bridge has to respect.

// Photo limits from the sendPhoto documentation: "The photo must be at most
// 10 MB in size. The photo's width and height must not exceed 10000 in
// total. Width and height ratio must be at most 20."
const (
	MaxPhotoUpload   = 10 << 20
	maxPhotoSides    = 10000
	maxPhotoRatio    = 20
	minAlbum         = 2
	maxAlbum         = 10
	descPhotoTooBig  = "PHOTO_SAVE_FILE_INVALID"
	descPhotoDims    = "PHOTO_INVALID_DIMENSIONS"
	descPhotoInvalid = "IMAGE_PROCESS_FAILED"
)

func (s *Server) sendPhoto(_ context.Context, p params) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, th, aerr := s.destinationLocked(p)
	if aerr != nil {
		return nil, aerr
	}
	sizes, aerr := s.photoLocked(p, "photo")
	if aerr != nil {
		return nil, aerr
	}
	raw, mode := p.str("caption"), p.str("parse_mode")
	caption, ents, aerr := s.captionLocked(raw, mode, p, "caption_entities")
	if aerr != nil {
		return nil, aerr
	}
	kb, _, aerr := keyboard(p, false)
	if aerr != nil {
		return nil, aerr
	}
	replyTo, aerr := replyTarget(c, p)
	if aerr != nil {
		return nil, aerr
	}
	if aerr := s.checkFloodLocked(c, "sendPhoto"); aerr != nil {
		return nil, aerr
	}
	m := s.storePhotoLocked(c, sizes, Message{Thread: th, IsTopic: th != 0, FromBot: true, Date: s.now(), Raw: raw, ParseMode: mode,
		Text: caption, Entities: ents, Keyboard: kb, ReplyTo: replyTo})
	s.bumpLocked()
	return s.wireMessageLocked(c, m, 0), nil
}

// destinationLocked resolves chat_id and message_thread_id.
func (s *Server) destinationLocked(p params) (*chatState, ThreadID, *apiError) {
	c, aerr := s.chatLocked(p)
	if aerr != nil {
		return nil, 0, aerr
	}
	th, aerr := threadLocked(c, p)
	return c, th, aerr
}

// captionLocked parses a caption and enforces its length.
func (s *Server) captionLocked(raw, mode string, p params, entitiesKey string) (string, []Entity, *apiError) {
	caption, ents, aerr := s.parsed(raw, mode, p, entitiesKey)
	if aerr != nil {
		return "", nil, aerr
	}
	if utf16Len(caption) > MaxCaptionLen {
		return "", nil, badRequest("message caption is too long")
	}
	return caption, ents, nil
}

// photoLocked resolves a photo parameter: an uploaded part named by field
// (or by attach://NAME in its value), a known photo file_id, or a URL.
// Uploaded photos are checked against the size and dimension limits; new
// sizes are stored by the caller once the whole call is accepted.
func (s *Server) photoLocked(p params, field string) ([]*storedFile, *apiError) {
	part, ok := p.files[field]
	ref := p.str(field)
	if name, isAttach := strings.CutPrefix(ref, "attach://"); isAttach {
		part, ok = p.files[name]
		if !ok {
			return nil, badRequest("wrong file identifier/HTTP URL specified")
		}
	}
	if ok {
		if len(part.data) > MaxPhotoUpload {
			return nil, badRequest(descPhotoTooBig)
		}
		sizes, err := photoFiles(part.data)
		if err != nil {
			return nil, badRequest(descPhotoInvalid)
		}
		big := sizes[len(sizes)-1]
		w, h := big.width, big.height
		if w+h > maxPhotoSides || max(w, h) > maxPhotoRatio*min(w, h) {
			return nil, badRequest(descPhotoDims)
		}
		return sizes, nil
	}
	switch f, known := s.files[ref]; {
	case ref == "":
		return nil, badRequest("there is no photo in the request")
	case known && !f.isPhoto():
		return nil, badRequest("can't use file of type Document as Photo")
	case known:
		return []*storedFile{f}, nil
	}
	return nil, badRequest("wrong file identifier/HTTP URL specified")
}

// storePhotoLocked adds the new sizes to the file store and stores the
// message that shows them.
func (s *Server) storePhotoLocked(c *chatState, sizes []*storedFile, m Message) *message {
	for _, f := range sizes {
		if f.id == "" {
			s.addFileLocked(f)
		}
		m.Photo = append(m.Photo, PhotoSize{FileID: f.id, FileUniqueID: f.uniqueID, Width: f.width, Height: f.height, FileSize: len(f.data)})
	}
	m.PhotoData = sizes[len(sizes)-1].data
	return c.store(&message{Message: m})
}

// inputMedia is one element of sendMediaGroup's media array.
type inputMedia struct {
	Type            string          `json:"type"`
	Media           string          `json:"media"`
	Caption         string          `json:"caption"`
	ParseMode       string          `json:"parse_mode"`
	CaptionEntities json.RawMessage `json:"caption_entities"`
}

// albumItem is an item of an accepted album, ready to store.
type albumItem struct {
	photo     []*storedFile
	doc       *storedFile
	newDoc    bool
	raw, mode string
	caption   string
	ents      []Entity
}

// sendMediaGroup sends 2–10 photos (with videos) or documents (or audio
// files) as one album and returns their messages. Telegram delivers the
// items one by one: when flood control trips at item N > 1, the items
// before it stay delivered and the call fails with a 400 naming N, which
// go-telegram/bot does not map to TooManyRequestsError (telegram-media.md
// §1).
func (s *Server) sendMediaGroup(_ context.Context, p params) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, th, aerr := s.destinationLocked(p)
	if aerr != nil {
		return nil, aerr
	}
	var media []inputMedia
	if _, err := p.json("media", &media); err != nil {
		return nil, badRequest("can't parse media JSON object")
	}
	switch {
	case len(media) > maxAlbum:
		return nil, badRequest("too much messages to send as an album")
	case len(media) < minAlbum:
		return nil, badRequest("too few messages to send as an album")
	}
	items := make([]albumItem, len(media))
	kinds := map[string]bool{}
	for i, in := range media {
		it, aerr := s.albumItemLocked(p, in, i)
		if aerr != nil {
			return nil, aerr
		}
		items[i] = it
		kinds[albumClass(in.Type)] = true
	}
	if len(kinds) > 1 {
		return nil, badRequest("can't mix %s", strings.Join(slices.Sorted(maps.Keys(kinds)), " and "))
	}
	replyTo, aerr := replyTarget(c, p)
	if aerr != nil {
		return nil, aerr
	}
	s.nextAlbum++
	group := strconv.FormatInt(13900000000000000+s.nextAlbum, 10)
	out := make([]*wireMessage, 0, len(items))
	for i, it := range items {
		if aerr := s.checkFloodLocked(c, "sendMediaGroup"); aerr != nil {
			if i == 0 {
				return nil, aerr
			}
			s.bumpLocked()
			return nil, badRequest("failed to send message #%d with the error message %q", i+1, aerr.desc)
		}
		m := Message{Thread: th, IsTopic: th != 0, FromBot: true, Date: s.now(), Raw: it.raw, ParseMode: it.mode,
			Text: it.caption, Entities: it.ents, MediaGroupID: group}
		if i == 0 {
			m.ReplyTo = replyTo
		}
		var stored *message
		if it.photo != nil {
			stored = s.storePhotoLocked(c, it.photo, m)
		} else {
			if it.newDoc {
				s.addFileLocked(it.doc)
			}
			m.Document = it.doc.document()
			stored = c.store(&message{Message: m, fileUniqueID: it.doc.uniqueID})
		}
		out = append(out, s.wireMessageLocked(c, stored, 0))
	}
	s.bumpLocked()
	return out, nil
}

// albumClass is what an item may share an album with: photos and videos
// mix, documents and audio files only with their own kind.
func albumClass(typ string) string {
	if typ == "video" {
		return "photo"
	}
	return typ
}

func (s *Server) albumItemLocked(p params, in inputMedia, i int) (albumItem, *apiError) {
	it := albumItem{raw: in.Caption, mode: in.ParseMode}
	// Each item's caption is parsed like a caption of its own.
	ip := params{values: map[string]string{"caption_entities": string(in.CaptionEntities)}}
	if len(in.CaptionEntities) == 0 || string(in.CaptionEntities) == "null" {
		ip.values = map[string]string{}
	}
	caption, ents, aerr := s.captionLocked(in.Caption, in.ParseMode, ip, "caption_entities")
	if aerr != nil {
		return it, aerr
	}
	it.caption, it.ents = caption, ents
	mp := params{values: map[string]string{"media": in.Media}, files: p.files}
	switch in.Type {
	case "photo":
		it.photo, aerr = s.photoLocked(mp, "media")
		return it, aerr
	case "document":
		name, isAttach := strings.CutPrefix(in.Media, "attach://")
		if isAttach {
			part, ok := p.files[name]
			if !ok {
				return it, badRequest("wrong file identifier/HTTP URL specified")
			}
			mt := part.contentType
			if mt == "" || mt == "application/octet-stream" {
				mt = mimeByName(part.name)
			}
			it.doc, it.newDoc = newDocumentFile(part.name, mt, part.data), true
			return it, nil
		}
		f, ok := s.files[in.Media]
		switch {
		case !ok:
			return it, badRequest("wrong file identifier/HTTP URL specified")
		case f.isPhoto():
			return it, badRequest("can't use file of type Photo as Document")
		}
		it.doc = f
		return it, nil
	case "video", "audio":
		return it, badRequest("the fake does not emulate %s items in albums", in.Type)
	case "animation":
		return it, badRequest("animations can't be sent in an album")
	case "":
		return it, badRequest("media item %d has no type", i)
	}
	return it, badRequest("unsupported media type %q", in.Type)
}

// Photos returns every photo message the bot sent, across chats, in chat
// then id order. The caption is in Text and the original bytes in
// PhotoData.
func (sn *Snapshot) Photos() []Message {
	var out []Message
	for _, m := range sn.botMedia() {
		if len(m.Photo) > 0 {
			out = append(out, m)
		}
	}
	return out
}

// Album returns the bot's messages of the album group, in id order.
func (sn *Snapshot) Album(chat ChatID, group string) []Message {
	var out []Message
	for _, m := range sn.Chats[chat] {
		if m.FromBot && m.MediaGroupID == group && group != "" {
			out = append(out, m)
		}
	}
	return out
}

func (sn *Snapshot) botMedia() []Message {
	var out []Message
	for _, id := range slices.Sorted(maps.Keys(sn.Chats)) {
		for _, m := range sn.Chats[id] {
			if m.FromBot && !m.Deleted {
				out = append(out, m)
			}
		}
	}
	return out
}
