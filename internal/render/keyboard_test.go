package render_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/untether/untether/internal/render"
)

func TestKeyboardMarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		kb   render.Keyboard
		want string
	}{
		{"zero keyboard", render.Keyboard{}, `{"inline_keyboard":[]}`},
		{"empty rows", render.Keyboard{Rows: [][]render.Button{}}, `{"inline_keyboard":[]}`},
		{"nil row is an empty array", render.Keyboard{Rows: [][]render.Button{nil}}, `{"inline_keyboard":[[]]}`},
		{
			"callback and url buttons omit the other field",
			render.Keyboard{Rows: [][]render.Button{
				{{Text: "✅ Approve", CallbackData: "a:1"}, {Text: "❌ Deny", CallbackData: "d:1"}},
				{{Text: "Docs", URL: "https://example.com/?a=1&b=2"}},
			}},
			`{"inline_keyboard":[[{"text":"✅ Approve","callback_data":"a:1"},{"text":"❌ Deny","callback_data":"d:1"}],[{"text":"Docs","url":"https://example.com/?a=1\u0026b=2"}]]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.kb)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(got))
			assert.NotContains(t, string(got), "copy_text")

			// Also as a field of a request struct, the way it is sent.
			req, err := json.Marshal(struct {
				ReplyMarkup render.Keyboard `json:"reply_markup"`
			}{tt.kb})
			require.NoError(t, err)
			assert.JSONEq(t, `{"reply_markup":`+tt.want+`}`, string(req))
		})
	}
}

func TestKeyboardRoundTrip(t *testing.T) {
	kb := render.Keyboard{Rows: [][]render.Button{
		{{Text: "Cancel", CallbackData: "c:42"}},
		{{Text: "Open", URL: "https://example.com"}},
	}}
	b, err := json.Marshal(kb)
	require.NoError(t, err)
	var back render.Keyboard
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, kb, back)

	assert.Error(t, json.Unmarshal([]byte(`{"inline_keyboard":"nope"}`), &back))
}

func TestKeyboardValidate(t *testing.T) {
	ok := render.Button{Text: "OK", CallbackData: "ok"}
	tests := []struct {
		name string
		kb   render.Keyboard
		want error // nil means valid
	}{
		{"zero keyboard", render.Keyboard{}, nil},
		{"valid", render.Keyboard{Rows: [][]render.Button{{ok, {Text: "Web", URL: "https://x.com"}}, {{Text: "Me", URL: "tg://user?id=1"}}}}, nil},
		{"64-byte callback data", render.Keyboard{Rows: [][]render.Button{{{Text: "x", CallbackData: strings.Repeat("a", 64)}}}}, nil},
		{"65-byte callback data", render.Keyboard{Rows: [][]render.Button{{{Text: "x", CallbackData: strings.Repeat("a", 65)}}}}, render.ErrCallbackData},
		{"callback data limit is in bytes", render.Keyboard{Rows: [][]render.Button{{{Text: "x", CallbackData: strings.Repeat("é", 33)}}}}, render.ErrCallbackData},
		{"empty row", render.Keyboard{Rows: [][]render.Button{{ok}, {}}}, render.ErrEmptyRow},
		{"empty text", render.Keyboard{Rows: [][]render.Button{{{CallbackData: "x"}}}}, render.ErrButtonText},
		{"blank text", render.Keyboard{Rows: [][]render.Button{{{Text: " \t", CallbackData: "x"}}}}, render.ErrButtonText},
		{"no action", render.Keyboard{Rows: [][]render.Button{{{Text: "x"}}}}, render.ErrButtonAction},
		{"two actions", render.Keyboard{Rows: [][]render.Button{{{Text: "x", CallbackData: "a", URL: "https://x.com"}}}}, render.ErrButtonAction},
		{"javascript url", render.Keyboard{Rows: [][]render.Button{{{Text: "x", URL: "javascript:alert(1)"}}}}, render.ErrButtonURL},
		{"relative url", render.Keyboard{Rows: [][]render.Button{{{Text: "x", URL: "/path"}}}}, render.ErrButtonURL},
		{"unparsable url", render.Keyboard{Rows: [][]render.Button{{{Text: "x", URL: "https://x.com/%zz"}}}}, render.ErrButtonURL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.kb.Validate()
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tt.want)
		})
	}
}

func TestKeyboardValidateReportsEveryProblemWithPosition(t *testing.T) {
	kb := render.Keyboard{Rows: [][]render.Button{
		{{Text: "fine", CallbackData: "f"}, {Text: "", CallbackData: "x"}},
		{{Text: "long", CallbackData: strings.Repeat("z", 100)}},
	}}
	err := kb.Validate()
	require.Error(t, err)
	assert.ErrorIs(t, err, render.ErrButtonText)
	assert.ErrorIs(t, err, render.ErrCallbackData)
	assert.Contains(t, err.Error(), "row 0 button 1")
	assert.Contains(t, err.Error(), `row 1 button 0 ("long")`)
}
