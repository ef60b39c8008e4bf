package ingress

import (
	"net/http"
	"strings"
	"time"
)

// CallObserver counts Bot API calls (metrics.Metrics is one): every call
// the daemon's Telegram client makes goes through the loop's transport,
// the outbox's sends and edits as well as getUpdates.
type CallObserver interface {
	// BotAPICall is one call of method answered with HTTP status code
	// (Telegram answers an error with its error_code as the status, 429
	// for flood control); 0 when no answer came.
	BotAPICall(method string, code int)
}

// SetObserver makes o hear every Bot API call from now on.
func (l *Loop) SetObserver(o CallObserver) { l.observe.Store(&o) }

// LastPollSuccess is when a getUpdates call last succeeded (its response
// read and decoded); zero before the first.
func (l *Loop) LastPollSuccess() time.Time {
	if ns := l.polled.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// Received is when the getUpdates response that brought the update was
// read; zero when the guard kept no note of it.
func (n Note) Received() time.Time { return n.received }

func (l *Loop) observeCall(req *http.Request, resp *http.Response, err error) {
	o := l.observe.Load()
	if o == nil {
		return
	}
	method, ok := apiMethod(req.URL.Path)
	if !ok {
		return // a file download
	}
	code := 0
	if err == nil && resp != nil {
		code = resp.StatusCode
	}
	(*o).BotAPICall(method, code)
}

// apiMethod is the Bot API method of a request path, …/bot<token>/<method>;
// ok is false for anything else (a file download is
// …/file/bot<token>/<path>).
func apiMethod(path string) (method string, ok bool) {
	segs := strings.Split(path, "/")
	n := len(segs)
	if n < 2 || !strings.HasPrefix(segs[n-2], "bot") || (n >= 3 && segs[n-3] == "file") {
		return "", false
	}
	return segs[n-1], true
}
