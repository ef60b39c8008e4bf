package telegramtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	_ "image/png" // registers PNG with image.Decode for user photos
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
)

// FileDownload is the Call.Method under which downloads from
// /file/bot{token}/{file_path} are logged, with the path in
// Params["file_path"]. No Bot API method has this name, so [Server.FailNext]
// and [Server.Delay] with it affect downloads only.
const FileDownload = "file"

// MaxDownload is the largest file getFile hands out a path for ("files of up
// to 20MB in size" in the Bot API docs).
const MaxDownload = 20 << 20

// thumbSide is the bounding box of the small photo size. Telegram's smallest
// size ("s") is about this big; what matters is that it is a different,
// smaller image, so a bridge that downloads photo[0] instead of the last
// entry gets the wrong bytes in tests too.
const thumbSide = 90

// storedFile is one entry of the file store: documents the bot uploaded or
// referenced, documents users sent and every size of users' photos.
type storedFile struct {
	id, uniqueID  string
	name, mime    string // documents only
	data          []byte
	width, height int    // photos only
	duration      int    // voice, audio, video notes: seconds
	dir, ext      string // file_path is dir/file_N.ext
	path          string // assigned by the first getFile
}

func (f *storedFile) isPhoto() bool { return f.dir == "photos" }

func (f *storedFile) document() *Document {
	return &Document{FileID: f.id, FileName: f.name, MimeType: f.mime, Data: f.data}
}

func newDocumentFile(name, mimeType string, data []byte) *storedFile {
	return &storedFile{name: name, mime: mimeType, data: data, dir: "documents", ext: safeExt(name)}
}

// safeExt keeps a file name's extension only if it is short and
// alphanumeric, so a file_path never needs escaping in a download URL
// (go-telegram/bot's FileDownloadLink does not escape it).
func safeExt(name string) string {
	ext := strings.ToLower(strings.TrimPrefix(path.Ext(name), "."))
	if ext == "" || len(ext) > 10 {
		return ""
	}
	for _, c := range ext {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return ""
		}
	}
	return ext
}

// addFileLocked gives f its ids and stores it. The prefixes mimic real ids
// (documents "BQAC…", photos "AgAC…"); the ids are opaque to bots anyway.
func (s *Server) addFileLocked(f *storedFile) {
	body := fmt.Sprintf("AgIAAxkBAAI%06d", len(s.files)+1)
	if f.isPhoto() {
		f.id, f.uniqueID = "AgAC"+body, "AQAD"+body
	} else {
		f.id, f.uniqueID = "BQAC"+body, "AgAD"+body
	}
	s.files[f.id] = f
}

type wireFile struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	FileSize     int    `json:"file_size,omitempty"`
	FilePath     string `json:"file_path,omitempty"`
}

// getFile hands out a download path. Telegram keeps a path valid for at
// least an hour and returns the same one on repeated calls meanwhile; the
// fake never expires it.
func (s *Server) getFile(_ context.Context, p params) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.files[p.str("file_id")]
	if f == nil {
		return nil, badRequest("invalid file_id")
	}
	if len(f.data) > MaxDownload {
		return nil, badRequest("file is too big")
	}
	if f.path == "" {
		f.path = f.dir + "/file_" + strconv.Itoa(len(s.paths))
		if f.ext != "" {
			f.path += "." + f.ext
		}
		s.paths[f.path] = f
		s.bumpLocked()
	}
	return wireFile{FileID: f.id, FileUniqueID: f.uniqueID, FileSize: len(f.data), FilePath: f.path}, nil
}

// serveFile implements GET /file/bot{token}/{file_path}. Errors are plain
// text: this route is not part of the JSON Bot API. Only paths returned by
// getFile exist, so a bridge that builds paths itself gets 404.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, rest string) {
	token, filePath, _ := strings.Cut(rest, "/")
	idx := s.beginCall(FileDownload, params{values: map[string]string{"file_path": filePath}})
	if token != s.cfg.token {
		s.plainError(w, idx, http.StatusUnauthorized)
		return
	}
	if f, ok := s.takeFault(idx); ok {
		s.applyFault(w, idx, f)
		return
	}
	if !s.sleep(r.Context(), s.delayFor(FileDownload)) {
		s.finishCall(idx, 0, "client gone during injected delay", 0)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		s.plainError(w, idx, http.StatusMethodNotAllowed)
		return
	}
	s.mu.Lock()
	f := s.paths[filePath]
	s.mu.Unlock()
	if f == nil {
		s.plainError(w, idx, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", contentTypeByExt(filePath))
	w.Header().Set("Content-Length", strconv.Itoa(len(f.data))) // data never changes once stored
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(f.data)
	}
	s.finishCall(idx, http.StatusOK, "", 0)
}

func (s *Server) plainError(w http.ResponseWriter, idx, code int) {
	http.Error(w, http.StatusText(code), code)
	s.finishCall(idx, code, http.StatusText(code), 0)
}

func contentTypeByExt(p string) string {
	if t := mime.TypeByExtension(path.Ext(p)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// photoFiles decodes a user's photo into its sizes, smallest first: a JPEG
// thumbnail and the original bytes. Telegram would also recompress the
// original to JPEG; the fake keeps it as sent so a test can compare the
// downloaded bytes exactly, and names its path by its real format.
func photoFiles(data []byte) ([]*storedFile, error) {
	img, format, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decode photo (JPEG or PNG expected): %w", err)
	}
	ext := map[string]string{"jpeg": "jpg", "png": "png"}[format]
	if ext == "" {
		return nil, fmt.Errorf("photo is %s; only JPEG and PNG are emulated", format)
	}
	b := img.Bounds()
	if b.Empty() {
		return nil, errors.New("photo has no pixels")
	}
	thumb := scaleToFit(img, thumbSide)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, thumb, &jpeg.Options{Quality: 80}); err != nil {
		return nil, fmt.Errorf("encode photo thumbnail: %w", err)
	}
	tb := thumb.Bounds()
	return []*storedFile{
		{data: buf.Bytes(), width: tb.Dx(), height: tb.Dy(), dir: "photos", ext: "jpg"},
		{data: bytes.Clone(data), width: b.Dx(), height: b.Dy(), dir: "photos", ext: ext},
	}, nil
}

// scaleToFit shrinks img (nearest neighbour) to fit a side×side box,
// keeping the aspect ratio; it never enlarges.
func scaleToFit(img image.Image, side int) *image.RGBA {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	nw, nh := w, h
	switch {
	case w <= side && h <= side:
	case w >= h:
		nw, nh = side, max(1, h*side/w)
	default:
		nw, nh = max(1, w*side/h), side
	}
	out := image.NewRGBA(image.Rect(0, 0, nw, nh))
	for y := range nh {
		for x := range nw {
			out.Set(x, y, img.At(b.Min.X+x*w/nw, b.Min.Y+y*h/nh))
		}
	}
	return out
}

// UserSendsPhoto posts a photo (JPEG or PNG bytes) with an optional caption
// and queues a "message" update whose photo array holds two sizes, the
// largest (the original bytes) last. getFile and the download route serve
// both. Caption commands get bot_command entities as in [Server.UserSends];
// [WithEntities] replaces them. Undecodable bytes fail the test.
func (s *Server) UserSendsPhoto(chat ChatID, user User, img []byte, caption string, opts ...UserOption) Message {
	s.t.Helper()
	m, err := s.TryUserSendsPhoto(chat, user, img, caption, opts...)
	if err != nil {
		s.t.Fatalf("telegramtest: UserSendsPhoto: %v", err)
	}
	return m
}

// TryUserSendsPhoto is [Server.UserSendsPhoto] returning errors instead of
// failing the test.
func (s *Server) TryUserSendsPhoto(chat ChatID, user User, img []byte, caption string, opts ...UserOption) (Message, error) {
	sizes, err := photoFiles(img)
	if err != nil {
		return Message{}, fmt.Errorf("send photo as user %d: %w", user.ID, err)
	}
	return s.postAsUser(chat, user, userContent{text: caption, files: sizes}, opts)
}

// UserSendsDocument posts a file as a document with an optional caption and
// queues a "message" update carrying document{file_id, file_unique_id,
// file_name, mime_type, file_size}. An empty mimeType is guessed from the
// file name. Files over [MaxDownload] are accepted, as Telegram accepts them
// from users, but getFile refuses them.
func (s *Server) UserSendsDocument(chat ChatID, user User, filename, mimeType string, data []byte, caption string, opts ...UserOption) Message {
	s.t.Helper()
	m, err := s.TryUserSendsDocument(chat, user, filename, mimeType, data, caption, opts...)
	if err != nil {
		s.t.Fatalf("telegramtest: UserSendsDocument: %v", err)
	}
	return m
}

// TryUserSendsDocument is [Server.UserSendsDocument] returning errors
// instead of failing the test.
func (s *Server) TryUserSendsDocument(chat ChatID, user User, filename, mimeType string, data []byte, caption string, opts ...UserOption) (Message, error) {
	if mimeType == "" {
		mimeType = mimeByName(filename)
	}
	f := newDocumentFile(filename, mimeType, bytes.Clone(data))
	return s.postAsUser(chat, user, userContent{text: caption, files: []*storedFile{f}}, opts)
}
