package httpd

import (
	"context"
	"errors"
	"fmt"
	stdlog "log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/net/netutil"
)

// Defaults of Options. The request sizes fit webhook deliveries (GitHub's
// are tens of kilobytes) and scrapes; the times fit a client on a poor
// link, not one that holds a connection open on purpose.
const (
	DefaultMaxConns          = 64
	DefaultMaxConcurrent     = 16
	DefaultMaxBodyBytes      = 1 << 20
	DefaultMaxHeaderBytes    = 16 << 10
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 15 * time.Second
	DefaultHandlerTimeout    = 15 * time.Second
	DefaultWriteTimeout      = 20 * time.Second // more than HandlerTimeout, so its 503 can be written
	DefaultIdleTimeout       = 60 * time.Second
)

// Options configure a Server. Zero limits take the defaults above.
type Options struct {
	// Addr is host:port to listen on (config http.listen).
	Addr string
	// Handler serves every request that passes the limits.
	Handler http.Handler
	// Log hears about the server's own errors (a failed accept, a handler
	// that panicked); a request that breaks a limit is not logged.
	Log zerolog.Logger
	// OnBusy is called for each request refused because MaxConcurrent
	// handlers run (for a metric); nil for none.
	OnBusy func()

	MaxConns          int
	MaxConcurrent     int
	MaxBodyBytes      int64
	MaxHeaderBytes    int
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	HandlerTimeout    time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
}

func (o *Options) defaults() {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = DefaultMaxConcurrent
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	def(&o.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&o.ReadTimeout, DefaultReadTimeout)
	def(&o.HandlerTimeout, DefaultHandlerTimeout)
	def(&o.WriteTimeout, DefaultWriteTimeout)
	def(&o.IdleTimeout, DefaultIdleTimeout)
}

// Server is the listener. Start it once; Shutdown stops it.
type Server struct {
	opt  Options
	srv  *http.Server
	ln   net.Listener
	done chan struct{} // closed when Serve returned
	mu   sync.Mutex
}

// New returns a server for o; nothing listens until Start.
func New(o Options) *Server {
	o.defaults()
	s := &Server{opt: o, done: make(chan struct{})}
	s.srv = &http.Server{
		Handler:           s.limits(o.Handler),
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		WriteTimeout:      o.WriteTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    o.MaxHeaderBytes,
		ErrorLog:          stdlog.New(o.Log.With().Str("component", "http").Logger(), "", 0),
	}
	return s
}

// Start binds Addr and serves in the background until Shutdown. ctx
// bounds the bind only. A second Start is an error.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln != nil {
		return errors.New("http listener already started")
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.opt.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.opt.Addr, err)
	}
	s.ln = netutil.LimitListener(ln, s.opt.MaxConns)
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.opt.Log.Error().Err(err).Str("addr", s.opt.Addr).Msg("the HTTP listener stopped")
		}
	}()
	return nil
}

// Addr is the address listened on (with the port chosen for ":0"), nil
// before Start.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Shutdown stops accepting, lets requests in handlers finish until ctx
// ends, then closes every connection. It is safe before Start.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	started := s.ln != nil
	s.mu.Unlock()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(fmt.Errorf("stop the HTTP listener: %w", err), s.srv.Close())
	}
	if started {
		<-s.done
	}
	return err
}
