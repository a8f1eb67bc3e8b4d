package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
// the status page (mountStatus). It returns the function that stops it; it fails when the
// address cannot be listened on.
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
	if err := mountOps(srv, d); err != nil {
		return nil, err
	}
	if err := mountStatus(srv, d); err != nil {
		return nil, err
	}
	at, err := srv.Listen()
	if err != nil {
		return nil, usageError("%v", err)
	}
	d.log.Info("server listening", "addr", at, "webhooks", len(d.pushers))
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(sctx); err != nil {
			d.log.Error("server", "err", err)
		}
	}()
	var subs sync.WaitGroup
	for _, ps := range d.pushers {
		if s, ok := ps.(subscriber); ok { // now that the server answers the provider's check
			subs.Go(func() { s.Subscribe(sctx) })
		}
	}
	return func() { cancel(); <-done; subs.Wait() }, nil
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

// mountStatus adds the status page at / (bridge/server/status) when it may be served: with the
// admin token of server.admin_token_file, or without one when the server listens on loopback
// only (the page then says so); on another address without a token it is left out and the log
// says why. It fails when the token file cannot be read or is too short.
func mountStatus(srv *server.Server, d *serveDeps) error {
	var token string
	if f := d.cfg.Server.AdminTokenFile; f != "" {
		t, err := status.ReadToken(f)
		if err != nil {
			return usageError("server.admin_token_file: %v", err)
		}
		token = t
	}
	loopback := status.Loopback(srv.Addr)
	if token == "" && !loopback {
		d.log.Warn("status page not served: server.addr is not a loopback address and server.admin_token_file is not set", "addr", srv.Addr)
		return nil
	}
	o := status.Options{Store: d.store, Token: token, Loopback: loopback, Log: d.log,
		RateLimit: fmt.Sprintf("at most %d data requests a minute (api.requests_per_minute)", d.cfg.API.RequestsPerMinute)}
	if d.client != nil {
		o.API = d.client
	}
	for _, s := range d.cfg.Sources {
		o.Sources = append(o.Sources, s.Name)
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
