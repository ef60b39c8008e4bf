package webhook

import (
	"errors"
	"fmt"
	"mime"
	"net/url"

	"github.com/untether/untether/internal/service/hookprompt"
)

// decodeBody reads a delivery's JSON: the body itself, or, in GitHub's
// form encoding (application/x-www-form-urlencoded), its payload field.
// The signature covers the raw body either way.
func decodeBody(contentType string, body []byte) (hookprompt.Data, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt == "application/x-www-form-urlencoded" {
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return hookprompt.Data{}, fmt.Errorf("the form body does not parse: %w", err)
		}
		if !form.Has("payload") {
			return hookprompt.Data{}, errors.New("the form body has no payload field")
		}
		body = []byte(form.Get("payload"))
	}
	d, err := hookprompt.Decode(body)
	if err != nil {
		return hookprompt.Data{}, fmt.Errorf("the body is not JSON: %w", err)
	}
	return d, nil
}
