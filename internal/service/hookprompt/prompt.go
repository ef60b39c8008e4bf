package hookprompt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	template "github.com/DataDog/datadog-agent/pkg/template/text"
)

// Template is a parsed trigger prompt. It is safe for concurrent use.
type Template struct {
	t *template.Template
}

// Parse parses src, a text/template over a JSON body, and tries it on an
// empty body, so that a template that could never run (a call of a
// function with the wrong arguments, a field given arguments) is refused
// when the configuration is loaded rather than at the first delivery.
func Parse(name, src string) (*Template, error) {
	t, err := template.New(name).Funcs(Funcs()).Parse(src)
	if err != nil {
		return nil, fmt.Errorf("parse prompt template: %w", err)
	}
	for _, tt := range t.Templates() {
		if tt.Tree != nil {
			rewrite(tt.Tree)
		}
	}
	p := &Template{t: t}
	if _, _, err := p.Render(Data{}, 1<<10); err != nil {
		return nil, fmt.Errorf("prompt template fails on an empty body: %w", err)
	}
	return p, nil
}

// Data is a decoded body, ready for Render.
type Data struct {
	v any
}

// Decode reads a JSON body for Render. Numbers keep their literal text
// (json.Number), so ids print as sent and never as 1.2e+09. A null counts
// as a missing key.
func Decode(body []byte) (Data, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return Data{}, fmt.Errorf("decode JSON body: %w", err)
	}
	if dec.More() {
		return Data{}, errors.New("decode JSON body: more than one JSON value")
	}
	return Data{v: dropNulls(v)}, nil
}

// dropNulls deletes null members of objects, so they read as missing; a
// null element of an array becomes an empty object (it keeps its place).
func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
				continue
			}
			x[k] = dropNulls(e)
		}
	case []any:
		for i, e := range x {
			if e == nil {
				x[i] = map[string]any(nil)
				continue
			}
			x[i] = dropNulls(e)
		}
	case nil:
		return map[string]any(nil)
	}
	return v
}

// errFull stops execution once the output reached its cap.
var errFull = errors.New("prompt reached its size cap")

// capWriter keeps at most max bytes and then fails every write.
type capWriter struct {
	buf bytes.Buffer
	max int
	cut bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.max - w.buf.Len(); len(p) > room {
		w.buf.Write(p[:max(room, 0)])
		w.cut = true
		return 0, errFull
	}
	return w.buf.Write(p)
}

// Render executes the template over d. The output holds at most max bytes
// (cut at a character boundary); truncated says it was cut. A panic during
// execution is returned as an error, like any execution error: neither can
// come from what the body holds, only from the template.
func (p *Template) Render(d Data, max int) (out string, truncated bool, err error) {
	w := &capWriter{max: max}
	defer func() {
		if r := recover(); r != nil {
			out, truncated, err = "", false, fmt.Errorf("render prompt: panic: %v", r)
		}
	}()
	err = p.t.Execute(w, d.v)
	if w.cut {
		b := w.buf.Bytes()
		for i := 0; i < utf8.UTFMax && len(b) > 0; i++ { // drop a character cut in half
			if r, size := utf8.DecodeLastRune(b); r != utf8.RuneError || size != 1 {
				break
			}
			b = b[:len(b)-1]
		}
		return string(b), true, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("render prompt: %w", err)
	}
	return strings.Clone(w.buf.String()), false, nil
}
