// Package httpd is untether's HTTP listener: a net/http server hardened so
// that a slow, huge or numerous client cannot hurt the daemon behind it.
//
// Every limit is set, with a default for each (Options):
//
//   - connections: at most MaxConns open at once (golang.org/x/net/netutil);
//     more wait in the kernel's queue until one closes;
//   - time: ReadHeaderTimeout (a slowloris client that trickles its
//     headers is dropped), ReadTimeout (the whole request, body included),
//     WriteTimeout, IdleTimeout between keep-alive requests, and
//     HandlerTimeout for a handler's work (http.TimeoutHandler: 503);
//   - size: MaxHeaderBytes (431), and MaxBodyBytes through
//     http.MaxBytesReader (413 when Content-Length says so up front; a
//     handler that reads past the cap gets an *http.MaxBytesError and
//     answers 413 itself, see TooLarge);
//   - concurrency: at most MaxConcurrent requests in handlers; one more is
//     answered 503 with Retry-After at once, never queued.
//
// The server knows nothing of what it serves: the caller passes the
// handler (internal/service puts /metrics, /healthz, /readyz and
// /hooks/{name} on one mux).
package httpd
