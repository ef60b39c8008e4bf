package main

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/untether/untether/internal/bridge"
	"github.com/untether/untether/internal/config"
	"github.com/untether/untether/internal/service"
	"github.com/untether/untether/internal/service/health"
	"github.com/untether/untether/internal/service/metrics"
)

// ops is what the daemon keeps for [http] listen: the metrics the bridge
// feeds, the readiness gate, the troubles /healthz names, and the
// listener. All nil while the listener is off: the bridge then counts
// nothing.
type ops struct {
	metrics *metrics.Metrics
	gate    health.Gate
	conds   health.Conditions
	svc     *service.Service
}

// newOps prepares the metrics when the listener is on.
func newOps(cfg *config.Config, log zerolog.Logger) *ops {
	o := &ops{}
	if cfg.HTTP.Enabled() {
		o.metrics = metrics.New(metrics.Build{Version: version, Commit: commit}, log)
	}
	return o
}

// cliVersion records what the version probe found ("" when it failed).
func (o *ops) cliVersion(v string) {
	if v != "" {
		o.metrics.SetCLIVersion(v) // a nil *Metrics records nothing
	}
}

// bridgeOptions adds what the bridge feeds the service to opts.
func (o *ops) bridgeOptions(opts *bridge.Options) {
	if o.metrics == nil {
		return
	}
	opts.Metrics = o.metrics
	opts.StateWatch = service.StateFaults{Metrics: o.metrics, Conditions: &o.conds}
}

// start starts the listener, before the bridge runs: /healthz and /readyz
// answer 503 until the first poll, and a webhook delivered meanwhile waits
// in the state database for the chats. Binding is an error: the operator
// asked for the listener.
func (o *ops) start(cfg *config.Config, b *bridge.Bridge, log zerolog.Logger) error {
	if o.metrics == nil {
		return nil
	}
	hooks := b.Webhooks()
	svc, err := service.New(service.Options{Listen: cfg.HTTP.Listen, Triggers: cfg.Triggers, Live: b, Ready: &o.gate,
		Degraded: &o.conds, Metrics: o.metrics, Fire: hooks, Seen: hooks, Log: log})
	if err != nil {
		return fmt.Errorf("prepare the HTTP listener: %w", err)
	}
	if err := svc.Start(context.Background()); err != nil {
		return err
	}
	o.svc = svc
	log.Info().Str("addr", svc.Addr().String()).Int("triggers", len(cfg.Triggers)).
		Msg("serving /metrics, /healthz, /readyz and /hooks/ over HTTP")
	return nil
}

// ready marks the daemon ready: the first getUpdates succeeded.
func (o *ops) ready() { o.gate.MarkReady() }

// draining marks the daemon not ready from the drain on: a balancer stops
// sending webhooks, and those that come get 503 (the triggers module).
func (o *ops) draining() { o.gate.MarkDraining() }

// reload gives the webhooks the triggers of the configuration now in use.
func (o *ops) reload(cfg *config.Config, log *zerolog.Logger) {
	if o.svc == nil {
		return
	}
	if err := o.svc.SetTriggers(cfg.Triggers); err != nil {
		log.Error().Err(err).Msg("reload: keeping the running webhooks")
	}
}

// stop closes the listener once the bridge has stopped: the drain kept it
// up, so /readyz said why and /healthz kept answering.
func (o *ops) stop(log *zerolog.Logger) {
	if o.svc == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := o.svc.Shutdown(ctx); err != nil {
		log.Warn().Err(err).Msg("stop the HTTP listener")
	}
}
