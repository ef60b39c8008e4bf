package telegramtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// maxUpload is Telegram's multipart upload limit; larger bodies get 413.
const maxUpload = 50 << 20

var errTooLarge = errors.New("request entity too large")

// filePart is one multipart file field.
type filePart struct {
	name        string
	contentType string
	data        []byte
}

// params is a request's parameters after merging every encoding Telegram
// accepts. Values are strings, as in form encodings; JSON bodies are
// normalised to the same shape (strings unquoted, objects kept as JSON text)
// so method code has one way to read them.
type params struct {
	values map[string]string
	files  map[string]filePart
}

// parseParams reads the query string and then the body. Body values win over
// query values, matching the official server's precedence.
func parseParams(r *http.Request) (params, error) {
	p := params{values: map[string]string{}, files: map[string]filePart{}}
	for k, vs := range r.URL.Query() {
		if len(vs) > 0 {
			p.values[k] = vs[0]
		}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxUpload+1))
	if err != nil {
		return p, fmt.Errorf("read request body: %w", err)
	}
	if len(body) > maxUpload {
		return p, errTooLarge
	}
	// go-telegram/bot sends multipart with an empty body for parameterless
	// methods such as getMe, so an empty body is never an error.
	if len(bytes.TrimSpace(body)) == 0 {
		return p, nil
	}
	mediaType, mparams, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mediaType {
	case "application/json":
		return p, p.fromJSON(body)
	case "multipart/form-data":
		return p, p.fromMultipart(body, mparams["boundary"])
	default: // urlencoded, or unlabelled form data
		vals, err := url.ParseQuery(string(body))
		if err != nil {
			return p, fmt.Errorf("parse urlencoded body: %w", err)
		}
		for k, vs := range vals {
			p.values[k] = vs[0]
		}
		return p, nil
	}
}

func (p *params) fromJSON(body []byte) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return fmt.Errorf("parse JSON body: %w", err)
	}
	for k, raw := range obj {
		var s string
		switch {
		case bytes.Equal(raw, []byte("null")):
			continue
		case json.Unmarshal(raw, &s) == nil:
			p.values[k] = s
		default:
			p.values[k] = string(raw)
		}
	}
	return nil
}

func (p *params) fromMultipart(body []byte, boundary string) error {
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read multipart part: %w", err)
		}
		data, err := io.ReadAll(part)
		if err != nil {
			return fmt.Errorf("read multipart field %q: %w", part.FormName(), err)
		}
		if part.FileName() != "" {
			p.files[part.FormName()] = filePart{name: part.FileName(), contentType: part.Header.Get("Content-Type"), data: data}
			continue
		}
		p.values[part.FormName()] = string(data)
	}
}

func (p params) str(k string) string { return p.values[k] }

// int64 parses an integer parameter; absent or empty gives (0, false, nil).
func (p params) int64(k string) (int64, bool, error) {
	v := strings.TrimSpace(p.values[k])
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, true, fmt.Errorf("parameter %s=%q is not an integer: %w", k, v, err)
	}
	return n, true, nil
}

func (p params) bool(k string) bool {
	b, _ := strconv.ParseBool(p.values[k])
	return b
}

// json decodes a JSON-valued parameter into dst; absent gives (false, nil).
func (p params) json(k string, dst any) (bool, error) {
	v, ok := p.values[k]
	if !ok || v == "" {
		return false, nil
	}
	if err := json.Unmarshal([]byte(v), dst); err != nil {
		return true, fmt.Errorf("parameter %s is not valid JSON: %w", k, err)
	}
	return true, nil
}

func (p params) record() (map[string]string, map[string]string) {
	vals := make(map[string]string, len(p.values))
	for k, v := range p.values {
		vals[k] = v
	}
	var files map[string]string
	if len(p.files) > 0 {
		files = make(map[string]string, len(p.files))
		for k, f := range p.files {
			files[k] = f.name
		}
	}
	return vals, files
}
