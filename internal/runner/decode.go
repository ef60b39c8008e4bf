package runner

import "errors"

// decodeEvents turns the result of DecodeFrame into events: a partly
// decoded frame yields its events plus an Unknown carrying the decode error,
// and a line that is not JSON yields a Warning. Nothing is dropped.
func decodeEvents(tr *Translator, f Frame, err error, line []byte, out []Event) []Event {
	if err != nil {
		var de *DecodeError
		if !errors.As(err, &de) || f == nil {
			return append(out, Warning{Line: append([]byte(nil), line...), Err: err})
		}
		out = append(out, Unknown{Kind: de.Kind, Raw: append([]byte(nil), line...), Err: err})
	}
	return tr.Translate(f, out)
}
