package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// MaxCallbackDataBytes is Telegram's limit on callback_data; longer data is
// refused with BUTTON_DATA_INVALID.
const MaxCallbackDataBytes = 64

// Errors returned (wrapped, with the button's position) by [Keyboard.Validate].
var (
	// ErrEmptyRow: a row without buttons.
	ErrEmptyRow = errors.New("keyboard row has no buttons")
	// ErrButtonText: a button with blank text, which Telegram refuses.
	ErrButtonText = errors.New("button text is empty")
	// ErrButtonAction: a button must have exactly one of CallbackData or URL.
	ErrButtonAction = errors.New("button needs exactly one of callback_data and url")
	// ErrCallbackData: callback_data outside 1–64 bytes.
	ErrCallbackData = errors.New("callback_data must be 1-64 bytes")
	// ErrButtonURL: a URL Telegram would not open from a button.
	ErrButtonURL = errors.New("button url must be an absolute http, https or tg url")
)

// Button is one inline keyboard button. Exactly one of CallbackData and URL
// is set. It is our own type rather than go-telegram's so that only these
// fields are ever serialised (go-telegram's always emits "copy_text").
type Button struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data,omitempty"`
	URL          string `json:"url,omitempty"`
}

// Keyboard is an inline keyboard: rows of buttons, top to bottom. It
// marshals to Telegram's InlineKeyboardMarkup and can be passed as
// reply_markup directly. The zero Keyboard marshals to an empty keyboard,
// which removes the buttons when sent with an edit.
type Keyboard struct {
	Rows [][]Button
}

// wireKeyboard is InlineKeyboardMarkup on the wire.
type wireKeyboard struct {
	InlineKeyboard [][]Button `json:"inline_keyboard"`
}

// MarshalJSON encodes k as {"inline_keyboard":[[...]]}, never as null.
func (k Keyboard) MarshalJSON() ([]byte, error) {
	rows := make([][]Button, len(k.Rows))
	for i, row := range k.Rows {
		if row == nil {
			row = []Button{}
		}
		rows[i] = row
	}
	return json.Marshal(wireKeyboard{InlineKeyboard: rows})
}

// UnmarshalJSON decodes Telegram's InlineKeyboardMarkup, so keyboards round
// trip through the fake Bot API in tests.
func (k *Keyboard) UnmarshalJSON(data []byte) error {
	var w wireKeyboard
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("decode inline keyboard: %w", err)
	}
	k.Rows = w.InlineKeyboard
	return nil
}

// Validate checks k against Telegram's rules for inline keyboards, so a bad
// button is caught before Telegram rejects the whole message it is attached
// to. Errors wrap the Err… sentinels above and name the button's position.
func (k Keyboard) Validate() error {
	var errs []error
	for r, row := range k.Rows {
		if len(row) == 0 {
			errs = append(errs, fmt.Errorf("row %d: %w", r, ErrEmptyRow))
		}
		for c, b := range row {
			if err := b.validate(); err != nil {
				errs = append(errs, fmt.Errorf("row %d button %d (%q): %w", r, c, b.Text, err))
			}
		}
	}
	return errors.Join(errs...)
}

func (b Button) validate() error {
	if strings.TrimSpace(b.Text) == "" {
		return ErrButtonText
	}
	if (b.CallbackData == "") == (b.URL == "") {
		return ErrButtonAction
	}
	if b.URL != "" {
		u, err := url.Parse(b.URL)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrButtonURL, err)
		}
		switch strings.ToLower(u.Scheme) {
		case "http", "https":
			if u.Host == "" {
				return ErrButtonURL
			}
		case "tg":
		default:
			return ErrButtonURL
		}
		return nil
	}
	if len(b.CallbackData) > MaxCallbackDataBytes {
		return fmt.Errorf("%w: got %d bytes", ErrCallbackData, len(b.CallbackData))
	}
	return nil
}
