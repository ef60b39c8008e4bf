package voice

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
)

// Endpoint is an OpenAI-compatible transcription endpoint.
type Endpoint struct {
	URL      string // e.g. https://api.openai.com/v1/audio/transcriptions
	Key      string // bearer token; "" sends none
	Model    string
	Language string // ISO-639-1; "" lets the endpoint detect it
	Client   *http.Client
}

// maxAnswer bounds the endpoint's answer.
const maxAnswer = 1 << 20

// Transcribe posts the audio as multipart/form-data: file, model,
// response_format=json and, when set, language.
func (e Endpoint) Transcribe(ctx context.Context, a Audio) (string, error) {
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	h := textproto.MIMEHeader{}
	name := a.Name
	if name == "" {
		name = "audio.ogg"
	}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, name))
	mt := a.MimeType
	if mt == "" {
		mt = "application/octet-stream"
	}
	h.Set("Content-Type", mt)
	part, err := w.CreatePart(h)
	if err == nil {
		_, err = part.Write(a.Data)
	}
	fields := [][2]string{{"model", e.Model}, {"response_format", "json"}}
	if e.Language != "" {
		fields = append(fields, [2]string{"language", e.Language})
	}
	for _, f := range fields {
		if err == nil {
			err = w.WriteField(f[0], f[1])
		}
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		return "", fmt.Errorf("build the transcription request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL, &body)
	if err != nil {
		return "", fmt.Errorf("build the transcription request: %w", err)
	}
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Accept", "application/json")
	if e.Key != "" {
		req.Header.Set("Authorization", "Bearer "+e.Key)
	}
	client := e.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		// url.Error names the URL, never the header carrying the key.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return "", fmt.Errorf("%w: reading the answer: %v", ErrUnreachable, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", &HTTPError{Status: resp.StatusCode, Message: errorMessage(raw, e.Key)}
	}
	var ans struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil || ans.Text == nil {
		return "", fmt.Errorf("the transcription service answered something other than {\"text\": …}: %.120s", raw)
	}
	text := cleanTranscript(*ans.Text)
	if text == "" {
		return "", ErrEmpty
	}
	return text, nil
}

// errorMessage is the explanation in an error answer: OpenAI's
// {"error":{"message":…}}, a bare {"error":"…"} or {"detail":…}, else the
// start of the body. A key the service echoes back is removed.
func errorMessage(raw []byte, key string) string {
	var v struct {
		Error  json.RawMessage `json:"error"`
		Detail json.RawMessage `json:"detail"`
	}
	msg := ""
	if json.Unmarshal(raw, &v) == nil {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &obj) == nil && obj.Message != "":
			msg = obj.Message
		case json.Unmarshal(v.Error, &s) == nil:
			msg = s
		case json.Unmarshal(v.Detail, &s) == nil:
			msg = s
		case len(v.Detail) > 0:
			msg = string(v.Detail)
		}
	}
	if msg == "" {
		msg = strings.TrimSpace(string(raw))
	}
	if key != "" {
		msg = strings.ReplaceAll(msg, key, "[redacted]")
	}
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return msg
}
