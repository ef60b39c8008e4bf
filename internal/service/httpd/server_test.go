package httpd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// echo answers with the length of the body it read, 413 when the body
// was over the cap.
func echo() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		switch {
		case TooLarge(err):
			http.Error(w, "too large", http.StatusRequestEntityTooLarge)
		case err != nil:
			http.Error(w, err.Error(), http.StatusBadRequest)
		default:
			fmt.Fprintf(w, "read %d", len(b))
		}
	})
}

// start runs a server on a free loopback port and stops it with the test.
func start(t *testing.T, o Options) (*Server, string) {
	t.Helper()
	o.Addr = "127.0.0.1:0"
	if o.Handler == nil {
		o.Handler = echo()
	}
	o.Log = zerolog.Nop()
	s := New(o)
	require.NoError(t, s.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		assert.NoError(t, s.Shutdown(ctx))
	})
	return s, "http://" + s.Addr().String()
}

// client is a client that never reuses a connection, so each request is
// judged alone, with a bound on every request.
func client() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := client().Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func TestServes(t *testing.T) {
	s, url := start(t, Options{})
	assert.Equal(t, "127.0.0.1", s.Addr().(*net.TCPAddr).IP.String())
	code, body := get(t, url+"/x")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "read 0", body)
	assert.Error(t, s.Start(context.Background()), "a second Start")
}

func TestStartFailsOnABusyAddress(t *testing.T) {
	s, _ := start(t, Options{})
	other := New(Options{Addr: s.Addr().String(), Handler: echo(), Log: zerolog.Nop()})
	err := other.Start(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), s.Addr().String())
	assert.NoError(t, other.Shutdown(context.Background()), "shutdown of a server that never started")
}

// TestSlowloris: a client that trickles its headers is cut off after
// ReadHeaderTimeout, and meanwhile other clients are served.
func TestSlowloris(t *testing.T) {
	s, url := start(t, Options{ReadHeaderTimeout: 300 * time.Millisecond})
	conn, err := net.Dial("tcp", s.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n")
	require.NoError(t, err)

	closed := make(chan error, 1)
	go func() { // one header byte every 50 ms, never the blank line
		for i := 0; ; i++ {
			if _, err := io.WriteString(conn, "X"); err != nil {
				closed <- err
				return
			}
			time.Sleep(50 * time.Millisecond)
			if i > 200 { // 10 s: the server never cut it off
				closed <- nil
				return
			}
		}
	}()
	code, _ := get(t, url) // served while the slow client holds its connection
	assert.Equal(t, http.StatusOK, code)

	require.Error(t, <-closed, "the server closed the slow connection")
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	rest, _ := io.ReadAll(conn)
	assert.NotContains(t, string(rest), "200 OK", "no request was served on it")
}

// TestIdleConnectionsAreDropped: connections that send nothing cannot hold
// the connection slots: with all of them taken, the next client is served
// once ReadHeaderTimeout drops the idle ones.
func TestIdleConnectionsAreDropped(t *testing.T) {
	s, url := start(t, Options{MaxConns: 2, ReadHeaderTimeout: 300 * time.Millisecond})
	for range 2 {
		c, err := net.Dial("tcp", s.Addr().String())
		require.NoError(t, err)
		defer c.Close()
	}
	code, _ := get(t, url)
	assert.Equal(t, http.StatusOK, code)
}

func TestBodyCap(t *testing.T) {
	_, url := start(t, Options{MaxBodyBytes: 1000})
	post := func(body io.Reader, length int64) (int, string) {
		req, err := http.NewRequest(http.MethodPost, url, body)
		require.NoError(t, err)
		req.ContentLength = length
		resp, err := client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := post(bytes.NewReader(make([]byte, 1000)), 1000)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "read 1000", body)

	// Declared too large: refused before any of the body is sent, and the
	// connection closed rather than read to the end.
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 67108864\r\n\r\n")
	require.NoError(t, err)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	assert.True(t, resp.Close, "the server closes the connection")

	// Chunked (no length): cut at the cap while reading.
	code, _ = post(io.MultiReader(strings.NewReader(strings.Repeat("x", 1001))), -1)
	assert.Equal(t, http.StatusRequestEntityTooLarge, code)
}

// TestSlowBody: a body trickled slower than ReadTimeout allows ends the
// request (the handler's read fails, or the request is cancelled as the
// connection dies) long before the body would have arrived, not a handler
// waiting for ever.
func TestSlowBody(t *testing.T) {
	s, _ := start(t, Options{ReadTimeout: 400 * time.Millisecond})
	conn, err := net.Dial("tcp", s.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
	require.NoError(t, err)
	go func() {
		for range 100 {
			if _, err := io.WriteString(conn, "x"); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Contains(t, []int{http.StatusBadRequest, http.StatusServiceUnavailable}, resp.StatusCode)
}

func TestHeaderCap(t *testing.T) {
	_, url := start(t, Options{MaxHeaderBytes: 1 << 10})
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("X-Big", strings.Repeat("a", 64<<10))
	resp, err := client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
}

// TestConcurrencyCap: with every slot taken by a handler that waits, the
// next request is answered 503 with Retry-After at once, and served again
// once a slot frees.
func TestConcurrencyCap(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 2)
	var busy atomic.Int32
	_, url := start(t, Options{MaxConcurrent: 2, OnBusy: func() { busy.Add(1) },
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/wait" {
				entered <- struct{}{}
				select {
				case <-release:
				case <-r.Context().Done():
				}
			}
		})})
	done := make(chan int, 2)
	for range 2 {
		go func() {
			resp, err := client().Get(url + "/wait")
			if err != nil {
				done <- 0
				return
			}
			resp.Body.Close()
			done <- resp.StatusCode
		}()
	}
	<-entered
	<-entered
	resp, err := client().Get(url + "/now")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	assert.Equal(t, int32(1), busy.Load())

	close(release)
	assert.Equal(t, http.StatusOK, <-done)
	assert.Equal(t, http.StatusOK, <-done)
	code, _ := get(t, url+"/now")
	assert.Equal(t, http.StatusOK, code)
}

// TestHandlerTimeout: a handler that does not finish in HandlerTimeout
// is answered 503 for it, and its context is cancelled.
func TestHandlerTimeout(t *testing.T) {
	cancelled := make(chan error, 1)
	_, url := start(t, Options{HandlerTimeout: 200 * time.Millisecond,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
			cancelled <- r.Context().Err()
		})})
	code, body := get(t, url)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "took too long")
	assert.True(t, errors.Is(<-cancelled, context.DeadlineExceeded))
}

// TestShutdown: a request in a handler finishes; after Shutdown nothing
// is accepted.
func TestShutdown(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	s := New(Options{Addr: "127.0.0.1:0", Log: zerolog.Nop(), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		io.WriteString(w, "finished")
	})})
	require.NoError(t, s.Start(context.Background()))
	url := "http://" + s.Addr().String()
	got := make(chan string, 1)
	go func() {
		resp, err := client().Get(url)
		if err != nil {
			got <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- string(b)
	}()
	<-entered
	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stopped <- s.Shutdown(ctx)
	}()
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", s.Addr().String(), time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	}, 5*time.Second, 20*time.Millisecond, "the listener closes")
	close(release)
	assert.Equal(t, "finished", <-got)
	assert.NoError(t, <-stopped)
}
