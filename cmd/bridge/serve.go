package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/server"
	"github.com/transcript-bridge/bridge/bridge/server/status"
	"github.com/transcript-bridge/bridge/connectors"
)

// serveDeps is what the HTTP server's handlers are built from: the running bridge's parts.
type serveDeps struct {
	cfg      *Config
	store    database
	pipeline *bridge.Pipeline
	client   *api.Client
	relay    *relay.Relay
	pushers  map[string]connectors.Pusher
	// telemetry is the bridge's metrics registry (GET /metrics).
	telemetry *telemetry
	log       *slog.Logger
}

// serveHTTP starts the bridge's HTTP server at server.addr (default 127.0.0.1:8080): each pushing
// source's webhook at POST /hooks/<type>/<name>, the health and metrics endpoints (mountOps) and
// the status page (mountStatus); /metrics and /readyz on a listener of their own when
// server.metrics_addr is set. It returns the function that stops it; it fails when an address
// cannot be listened on.
func serveHTTP(ctx context.Context, d *serveDeps) (func(), error) {
	addr := d.cfg.Server.Addr
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	srv := server.New(addr, d.log)
	types := cfgTypes(d.cfg)
	for name, ps := range d.pushers {
		srv.Handle("POST /hooks/"+types[name]+"/"+name, ps.Handler(func(ctx context.Context, recs []connectors.Recording) error {
			_, err := d.pipeline.Intake(ctx, name, recs)
			return err
		}))
	}
	// /metrics and /readyz on the main listener, or on server.metrics_addr's own.
	ops := srv
	if a := d.cfg.Server.MetricsAddr; a != "" {
		ops = server.New(a, d.log)
		ops.Key = "server.metrics_addr"
	}
	if err := mountOps(ops, d); err != nil {
		return nil, err
	}
	if err := mountStatus(srv, d); err != nil {
		return nil, err
	}
	servers := []*server.Server{srv}
	if ops != srv {
		servers = append(servers, ops)
	}
	for _, s := range servers {
		if _, err := s.Listen(); err != nil {
			for _, o := range servers {
				o.Close()
			}
			return nil, usageError("%v", err)
		}
	}
	d.log.Info("server listening", "addr", srv.Listening(), "webhooks", len(d.pushers))
	if ops != srv {
		d.log.Info("metrics and readiness listening apart", "metrics_addr", ops.Listening())
	}
	sctx, cancel := context.WithCancel(ctx)
	var served sync.WaitGroup
	for _, s := range servers {
		served.Go(func() {
			if err := s.Serve(sctx); err != nil {
				d.log.Error("server", "addr", s.Addr, "error", err)
			}
		})
	}
	done := make(chan struct{})
	go func() { served.Wait(); close(done) }()
	var subs sync.WaitGroup
	for _, ps := range d.pushers {
		if s, ok := ps.(subscriber); ok { // now that the server answers the provider's check
			subs.Go(func() { s.Subscribe(sctx) })
		}
	}
	return func() { cancel(); <-done; subs.Wait() }, nil
}

// trustedProxies parses server.trusted_proxies: each an address or a CIDR range.
func (c *Config) trustedProxies() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for i, p := range c.Server.TrustedProxies {
		p = strings.TrimSpace(p)
		if pfx, err := netip.ParsePrefix(p); err == nil {
			out = append(out, pfx.Masked())
			continue
		}
		a, err := netip.ParseAddr(p)
		if err != nil {
			return nil, fmt.Errorf("server.trusted_proxies[%d]: %q is not an address or a CIDR range (10.0.0.0/8, 127.0.0.1)", i, p)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// exposedBy says what in cfg makes the server reachable from outside, "" when nothing does: a
// source that receives webhooks (Zoom, Teams notifications: the provider must reach
// /hooks/…, so a proxy or tunnel forwards to this server) or a public URL configured for one.
func exposedBy(cfg *Config) string {
	var pushing []string
	for _, s := range cfg.Sources {
		if pushes(s) {
			pushing = append(pushing, fmt.Sprintf("%s (%s)", s.Name, s.Type))
		}
	}
	if len(pushing) == 0 {
		return ""
	}
	return "source " + strings.Join(pushing, ", ") + " receives webhooks from outside"
}

// pushes reports whether source s receives webhooks: a Zoom source with a webhook secret (its
// event subscription posts to /hooks/zoom/<name>), or a source with a public_url (Teams'
// notifications).
func pushes(s SourceConfig) bool {
	if f, _ := s.Options["webhook_secret_file"].(string); s.Type == "zoom" && f != "" {
		return true
	}
	if n, ok := s.Options["notifications"].(map[string]any); ok && n["public_url"] != nil && n["public_url"] != "" {
		return true
	}
	_, ok := s.Options["public_url"]
	return ok
}

// subscriber is a pushing source that keeps its own subscription at the provider alive while
// the server runs (teams: Graph change notifications, whose URL Graph checks when the
// subscription is made, so it starts once the server listens).
type subscriber interface{ Subscribe(ctx context.Context) }

// mountOps adds the operators' endpoints beyond /healthz, unauthenticated and cheap: GET
// /readyz (200 when the store answers at the current schema, the API answered lately and the
// relay reads the bus; else 503 naming each failing check: readyChecks) and GET /metrics (the
// bridge's own registry in Prometheus's format). It fails only when the server has no metrics.
func mountOps(srv *server.Server, d *serveDeps) error {
	if d.telemetry == nil {
		return errors.New("server: no metrics registry")
	}
	srv.Handle("GET /readyz", server.Ready(0, readyChecks(d)...))
	srv.Handle("GET /metrics", d.telemetry.handler())
	return nil
}

// mountStatus adds the status page at / (bridge/server/status), behind a sign-in with the admin
// token: server.admin_token_file's, or one the bridge makes and keeps (adminToken) and whose file
// the log names. Only server.admin_without_token serves it without one, on a loopback address
// (else it is left out), to local requests only, and never while a source receives webhooks
// from outside (exposedBy: every path answers 403 saying why). It fails when the token file
// cannot be read or is too short.
func mountStatus(srv *server.Server, d *serveDeps) error {
	loopback := status.Loopback(srv.Addr)
	var token string
	switch {
	case d.cfg.Server.AdminWithoutToken && d.cfg.Server.AdminTokenFile == "":
		if !loopback {
			d.log.Warn("status page not served: server.admin_without_token serves it on a loopback address only, and server.addr is not one", "addr", srv.Addr)
			return nil
		}
		if why := exposedBy(d.cfg); why != "" {
			msg := "status page not served: server.admin_without_token is set and " + why +
				", so the server is reachable from outside (through a proxy or a tunnel) and a page without a token would be public"
			d.log.Warn(msg)
			srv.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, msg+". Remove server.admin_without_token (the page then asks for the admin token).", http.StatusForbidden)
			}))
			return nil
		}
	default:
		t, path, made, err := adminToken(d.cfg)
		if err != nil {
			var ue *exitError
			if errors.As(err, &ue) {
				return err
			}
			d.log.Warn("status page not served: no admin token", "error", err)
			return nil
		}
		token = t
		if made {
			d.log.Info("status page: made an admin token; sign in with the token in its file", "file", path)
		}
	}
	trusted, err := d.cfg.trustedProxies()
	if err != nil {
		return usageError("%v", err)
	}
	o := status.Options{Store: d.store, Token: token, Loopback: loopback, Log: d.log,
		TrustedProxies: trusted, SecureCookies: d.cfg.Server.SecureCookies,
		RateLimit: fmt.Sprintf("at most %d data requests a minute (api.requests_per_minute)", d.cfg.API.RequestsPerMinute)}
	if d.client != nil {
		o.API, o.Deleter = d.client, d.client
	}
	for _, s := range d.cfg.Sources {
		o.Sources = append(o.Sources, s.Name)
	}
	if d.pipeline != nil {
		o.SourceHealth = d.pipeline.SourceHealth
	}
	for _, w := range d.cfg.Webhooks {
		o.Endpoints = append(o.Endpoints, status.Endpoint{Name: w.Name, URL: relay.RedactURL(w.URL)})
	}
	for i := range d.cfg.Exports {
		o.Exports = append(o.Exports, &d.cfg.Exports[i])
	}
	p, err := status.New(o)
	if err != nil {
		return err
	}
	p.Mount(srv)
	d.log.Info("status page at /", "admin_token", token != "", "loopback_only", loopback)
	return nil
}
