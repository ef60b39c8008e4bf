// Package service runs untether as a service: one local HTTP listener
// ([http] listen, off when unset) serving
//
//	GET  /metrics        Prometheus text format (metrics)
//	GET  /healthz        liveness, the systemd watchdog's signal (health)
//	GET  /readyz         readiness: polling, not draining (health)
//	POST /hooks/{name}   a [[triggers]] webhook that starts a turn (webhook)
//
// New assembles them on one mux behind the hardened server (httpd). The
// daemon hands it what only it has, through small consumer-side
// interfaces: the liveness check, the readiness gate, a Firer that queues
// a trigger's run in its chat, and optionally a Seen store and trouble
// that degrades without failing health.
//
// Why sub-packages rather than one: each concern stands alone and is
// tested alone, and the daemon's other parts import only what they feed —
// the bridge's modules call metrics' typed events without pulling in an
// HTTP server, and config checks a trigger's prompt with hookprompt
// without importing the webhook handler.
//
//	httpd       the listener: timeouts, caps, concurrency, shutdown
//	metrics     the registry, one typed method per event, scrape-time probes
//	health      /healthz and /readyz from Liveness, Readiness, Degradation
//	webhook     POST /hooks/{name}: HMAC, replay, prompt, Fire
//	hookprompt  the trigger prompt's template: parsing and lenient rendering
package service
