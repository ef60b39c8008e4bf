package main

import (
	"context"
	"net"
	"time"

	"github.com/untether/untether/internal/config"
)

// serviceChecks reports [http] listen and [[triggers]]. Validation already
// refused an address that does not parse and a trigger for a chat
// untether does not serve; this says what the address exposes.
func serviceChecks(ctx context.Context, cfg *config.Config, say func(level, format string, a ...any)) {
	addr := cfg.HTTP.Listen
	if addr == "" {
		if n := len(cfg.Triggers); n > 0 {
			say("warn", "%d [[triggers]] %s set, but http.listen is empty: no webhook can reach %s", n,
				plural(n, "is", "are"), plural(n, "it", "them"))
		}
		return
	}
	if listenLoopback(ctx, addr) {
		say("ok", "http: %s accepts connections from this machine only", addr)
		return
	}
	where := "is not a loopback address"
	if host, _ := config.ParseListen(addr); host == "" || net.ParseIP(host) != nil && net.ParseIP(host).IsUnspecified() {
		where = "listens on every interface"
	}
	say("warn", "http: %s %s: whoever reaches it can read /metrics, /healthz and /readyz, "+
		"and the webhooks are guarded by their secrets alone, over plain HTTP; listen on 127.0.0.1 behind a reverse "+
		"proxy that adds TLS, or keep the address on a private network", addr, where)
}

// listenLoopback reports whether addr only takes connections from this
// machine: a loopback address, or a host name all of whose addresses are.
func listenLoopback(ctx context.Context, addr string) bool {
	if config.ListenIsLoopback(addr) {
		return true
	}
	host, err := config.ParseListen(addr)
	if err != nil || host == "" || net.ParseIP(host) != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil || len(ips) == 0 {
		return false
	}
	for _, ip := range ips {
		if !ip.IP.IsLoopback() {
			return false
		}
	}
	return true
}
