package service

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/service/health"
	"github.com/untether/untether/internal/service/httpd"
	"github.com/untether/untether/internal/service/metrics"
	"github.com/untether/untether/internal/service/webhook"
)

// Options are what the daemon gives the service.
type Options struct {
	// Listen is config http.listen; it must not be empty.
	Listen string
	// Triggers are config [[triggers]].
	Triggers []config.Trigger
	// Live and Ready answer /healthz and /readyz; both required.
	// (*bridge.Bridge) fits Live; a *health.Gate fits Ready.
	Live  health.Liveness
	Ready health.Readiness
	// Degraded is trouble shown by /healthz without failing it; nil for
	// none.
	Degraded health.Degradation
	// Metrics is served at /metrics and counts requests and deliveries;
	// required.
	Metrics *metrics.Metrics
	// Fire takes a trigger's run; required when there are triggers.
	Fire webhook.Firer
	// Seen remembers deliveries against replays; nil keeps them in memory.
	Seen webhook.Seen
	Log  zerolog.Logger
	// Limits of the listener; zero values take httpd's defaults. Tests
	// shorten them.
	Limits httpd.Options
}

// Service is the listener with its routes.
type Service struct {
	srv   *httpd.Server
	hooks *webhook.Handler
}

// New assembles the routes; nothing listens until Start.
func New(o Options) (*Service, error) {
	switch {
	case o.Listen == "":
		return nil, errors.New("service: no listen address")
	case o.Live == nil || o.Ready == nil:
		return nil, errors.New("service: liveness and readiness are required")
	case o.Metrics == nil:
		return nil, errors.New("service: metrics are required")
	case o.Fire == nil && len(o.Triggers) > 0:
		return nil, errors.New("service: triggers need a Firer")
	}
	fire := o.Fire
	if fire == nil {
		fire = noFire{}
	}
	hooks := webhook.New(webhook.Options{Fire: fire, Seen: o.Seen, Log: o.Log, Observe: o.Metrics})
	if err := hooks.SetTriggers(o.Triggers); err != nil {
		return nil, fmt.Errorf("service: %w", err)
	}
	m := o.Metrics
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.InstrumentHTTP("metrics", m.Handler()))
	mux.Handle("GET /healthz", m.InstrumentHTTP("healthz", health.Healthz(o.Live, o.Degraded, time.Now)))
	mux.Handle("GET /readyz", m.InstrumentHTTP("readyz", health.Readyz(o.Ready)))
	mux.Handle("POST /hooks/{name}", m.InstrumentHTTP("hooks", hooks))

	lim := o.Limits
	lim.Addr, lim.Handler, lim.Log, lim.OnBusy = o.Listen, mux, o.Log, m.HTTPBusy
	return &Service{srv: httpd.New(lim), hooks: hooks}, nil
}

// Start listens and serves until Shutdown. A failure to bind is an error:
// the operator asked for the listener.
func (s *Service) Start(ctx context.Context) error { return s.srv.Start(ctx) }

// Addr is the address listened on, nil before Start.
func (s *Service) Addr() net.Addr { return s.srv.Addr() }

// Shutdown stops the listener, letting requests finish until ctx ends.
func (s *Service) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }

// SetTriggers replaces the webhooks' triggers (a reload).
func (s *Service) SetTriggers(ts []config.Trigger) error { return s.hooks.SetTriggers(ts) }

// noFire is the Firer of a service without triggers: every name is 404
// before it could be called.
type noFire struct{}

func (noFire) Fire(context.Context, webhook.Run) error {
	return errors.New("no trigger can run: the service was started without a Firer")
}
