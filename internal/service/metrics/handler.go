package metrics

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
)

// scrapeTimeout bounds one scrape: a probe stuck behind a lock must not
// hold the listener's slots.
const scrapeTimeout = 10 * time.Second

// maxScrapes is how many scrapes may run at once; more are answered 503
// at once rather than piling up behind a slow probe.
const maxScrapes = 2

// contentType is Prometheus' text format, the one format served.
const contentType = "text/plain; version=0.0.4; charset=utf-8"

// Handler serves the metrics in Prometheus' text format, at most two
// scrapes at once, each bounded by scrapeTimeout. Its limits and answers
// are those client_golang's promhttp.HandlerFor gave with
// MaxRequestsInFlight 2 and Timeout 10 s.
func (m *Metrics) Handler() http.Handler {
	inFlight := make(chan struct{}, maxScrapes)
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		select {
		case inFlight <- struct{}{}:
			defer func() { <-inFlight }()
		default:
			http.Error(w, fmt.Sprintf("Limit of concurrent requests reached (%d), try again later.", maxScrapes),
				http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", contentType)
		m.write(w)
	})
	return http.TimeoutHandler(h, scrapeTimeout, fmt.Sprintf("Exceeded configured timeout of %v.\n", scrapeTimeout))
}

// write writes one scrape to w: untether's metrics, the probes, then Go's
// and the process's own.
func (m *Metrics) write(w io.Writer) {
	var b bytes.Buffer
	m.set.WritePrometheus(&b)
	m.writeProbes(&b)
	vm.WriteProcessMetrics(&b) // go_*, process_* (process_cpu_seconds_total, process_resident_memory_bytes, …)
	vm.WriteFDMetrics(&b)      // process_open_fds, process_max_fds, which WriteProcessMetrics leaves out
	writeHelp(w, b.Bytes())
}

// helpLines is the whole HELP line of each family in help, its text
// escaped as the text format wants (a backslash, a newline).
var helpLines = func() map[string]string {
	esc := strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	l := make(map[string]string, len(help))
	for name, text := range help {
		l[name] = "# HELP " + name + " " + esc.Replace(text) + "\n"
	}
	return l
}()

// writeHelp copies the exposition b to w with each bare "# HELP name"
// line the library wrote given its family's text from help. Lines are
// matched whole, so a label value cannot pass for a HELP line (its
// newlines are escaped).
func writeHelp(w io.Writer, b []byte) {
	const bare = "# HELP "
	start := 0 // of what is not written yet
	for at := 0; at < len(b); {
		end := bytes.IndexByte(b[at:], '\n')
		if end < 0 {
			end = len(b)
		} else {
			end += at + 1
		}
		if name, ok := bytes.CutPrefix(bytes.TrimSuffix(b[at:end], []byte("\n")), []byte(bare)); ok {
			if line, ok := helpLines[string(name)]; ok {
				w.Write(b[start:at])
				io.WriteString(w, line)
				start = end
			}
		}
		at = end
	}
	w.Write(b[start:])
}

// HTTPBusy counts a request the listener refused because every handler
// slot was taken, as handler "busy", code 503 in
// untether_http_requests_total.
func (m *Metrics) HTTPBusy() {
	if m == nil {
		return
	}
	m.httpReqs.with("busy", "503").Inc()
}

// InstrumentHTTP counts h's answers in untether_http_requests_total under
// the handler label name, by the status code h answered with (200 when it
// wrote no status), as promhttp.InstrumentHandlerCounter did.
func (m *Metrics) InstrumentHTTP(name string, h http.Handler) http.Handler {
	if m == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		m.httpReqs.with(name, codeLabel(sw.code)).Inc()
	})
}

// codeLabel is an HTTP status as the code label; 0, no status written,
// is the 200 net/http sends then.
func codeLabel(code int) string {
	if code == 0 {
		return statusLabels[http.StatusOK]
	}
	if code >= 100 && code < len(statusLabels) {
		return statusLabels[code]
	}
	return strconv.Itoa(code) // net/http takes 100 to 999
}

// statusWriter remembers the status a handler answered with. Unwrap lets
// http.ResponseController reach the connection's writer (Flush,
// deadlines) through it; no instrumented handler asserts w's type.
type statusWriter struct {
	http.ResponseWriter
	code        int
	wroteHeader bool
}

func (w *statusWriter) WriteHeader(code int) {
	w.code, w.wroteHeader = code, true
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
