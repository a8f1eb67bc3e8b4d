package main

import (
	"cmp"
	"context"
	"log/slog"
	"slices"

	"github.com/robfig/cron/v3"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/export"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/mapping"
	"github.com/transcript-bridge/bridge/sandbox"
)

// The steps of runBridge, in the order it takes them.

// checkSources builds every configured source and checks its mapping, before the store is
// opened: a bad setting creates no database. The sources are in the order of cfg.Sources.
func checkSources(cfg *Config) ([]connectors.Source, error) {
	srcs := make([]connectors.Source, len(cfg.Sources))
	for i, s := range cfg.Sources {
		var err error
		if srcs[i], err = connectors.New(s.Type, s.Name, s.Options); err != nil {
			return nil, cfg.sourceError(i, err)
		}
		if _, err := newMapper(s, "check", &mapping.Members{}); err != nil {
			return nil, usageError("sources[%d].%v", i, err)
		}
	}
	return srcs, nil
}

// pipelineSetup is the pipeline buildPipeline builds and what the later steps need from the
// configured sources.
type pipelineSetup struct {
	// pipeline has every source; its API is set once the client is built.
	pipeline *bridge.Pipeline
	// members is the member list the mappers share; its Dir is set to the API client.
	members *mapping.Members
	// schedules is each source's scan schedule, by source name.
	schedules map[string]string
	// pushers are the sources that receive webhooks, by source name.
	pushers map[string]connectors.Pusher
	// needReports says some source uploads with reports (the key needs reports:write).
	needReports bool
	// needMembers says some source's mapping reads the member list.
	needMembers bool
}

// buildPipeline builds the pipeline over store with the sources srcs (from checkSources), each
// with its mapper for this installation and its upload options.
func buildPipeline(ctx context.Context, cfg *Config, srcs []connectors.Source, store database, log *slog.Logger) (*pipelineSetup, error) {
	instance, err := store.InstanceID(ctx)
	if err != nil {
		return nil, err
	}
	b := &pipelineSetup{
		pipeline: &bridge.Pipeline{Store: store, Instance: instance, Log: log, UploadConcurrency: cfg.API.UploadConcurrency,
			Replica: cmp.Or(cfg.Replica.Name, bridge.DefaultReplica()), Lease: cfg.Replica.Lease, Sources: map[string]*bridge.SourceConfig{}},
		members:   &mapping.Members{},
		schedules: map[string]string{},
		pushers:   map[string]connectors.Pusher{},
	}
	for i, s := range cfg.Sources {
		src := srcs[i]
		m, err := newMapper(s, instance, b.members)
		if err != nil {
			return nil, usageError("sources[%d].%v", i, err)
		}
		b.needMembers = b.needMembers || slices.Contains(s.Mapping.Rules, mapping.RuleIdentity) || slices.Contains(s.Mapping.Rules, mapping.RuleEmail)
		if l, ok := src.(interface{ SetLogger(*slog.Logger) }); ok { // the source's own warnings
			l.SetLogger(log)
		}
		if ps, ok := src.(connectors.Pusher); ok {
			b.pushers[s.Name] = ps
		}
		u := s.Upload
		b.pipeline.Sources[s.Name] = &bridge.SourceConfig{Name: s.Name, Type: s.Type, Source: src, Mapper: m, RetryDeadline: s.RetryDeadline,
			Upload: bridge.UploadOptions{Language: u.Language, ProjectID: u.ProjectID, Diarize: u.Diarize,
				SpeakersCount: u.SpeakersCount, AIMetadata: u.AIMetadata, Reports: u.Reports}}
		b.schedules[s.Name] = s.Schedule
		b.needReports = b.needReports || len(u.Reports) > 0
	}
	return b, nil
}

// connectAPI builds the API client: to api.base_url with the configured key, or, when
// api.base_url is empty, to an in-process sandbox that stop shuts down (stop does nothing
// otherwise).
func connectAPI(ctx context.Context, cfg *Config, log *slog.Logger) (client *api.Client, stop func(), err error) {
	return connectAPIWith(ctx, cfg, nil, log)
}

// connectAPIWith is connectAPI with the client's requests counted by m (nil: not counted).
func connectAPIWith(ctx context.Context, cfg *Config, m api.Metrics, log *slog.Logger) (client *api.Client, stop func(), err error) {
	stop = func() {}
	base, key := cfg.API.BaseURL, cfg.API.Key
	if base == "" {
		url, stopSandbox, err := startLocalSandbox(ctx, cfg, log)
		if err != nil {
			return nil, nil, err
		}
		stop = stopSandbox
		base, key = url, sandbox.LocalKey
	} else if key, err = readAPIKey(key, cfg.API.KeyFile, "api.key_file"); err != nil {
		return nil, nil, err
	}
	acfg := cfg.API.clientConfig(base, key)
	acfg.Metrics = m
	client, err = api.New(acfg)
	if err != nil {
		stop()
		return nil, nil, usageError("api: %v", err)
	}
	return client, stop, nil
}

// startRelay subscribes to the configured event bus and builds the relay that delivers events
// to endpoints, its attempts counted by m (nil: not counted). Events leave through the bus even without endpoints: the relay logs each one.
// Without once the relay runs until stop, which waits for it and then closes the bus; with once
// it does not run (runBridge drains the bus's forwarder, if any, then flushes the relay) and stop
// only closes the bus.
func startRelay(ctx context.Context, cfg *Config, store database, endpoints []*relay.Endpoint, client *api.Client, once bool, m relay.Metrics, log *slog.Logger) (rl *relay.Relay, drain func(context.Context) error, stop func(), err error) {
	eb, err := openBus(ctx, cfg, store, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	drain = func(ctx context.Context) error {
		if eb.drain == nil {
			return nil
		}
		return eb.drain(ctx)
	}
	rl = &relay.Relay{Store: store, Bus: eb.sub, Poison: eb.poison, Endpoints: endpoints, API: client, Log: log, Lease: cfg.Relay.Lease, Metrics: m,
		Replica: cfg.Replica.Name}
	if cfg.Store.Driver == "postgres" {
		rl.Committers = relay.CommittersPostgres
	}
	// A full payload's fetch answering 404 ends the job deleted, as the tracker would.
	rl.GoneUpstream = (&bridge.Pipeline{Store: store, Log: log}).GoneUpstream
	if once {
		return rl, drain, eb.close, nil
	}
	rctx, stopRelay := context.WithCancel(ctx)
	relayDone := make(chan error, 1)
	go func() { relayDone <- rl.Run(rctx, cfg.Relay.Interval) }()
	return rl, drain, func() {
		stopRelay()
		if err := <-relayDone; err != nil {
			log.Error("relay", "error", err)
		}
		eb.close()
	}, nil
}

// startSchedules starts the identity syncs of the sources with a mapping.sync schedule; stop
// waits for a running sync to end.
func startSchedules(ctx context.Context, cfg *Config, p *bridge.Pipeline, client *api.Client) (stop func(), err error) {
	cl := bridge.CronLogger(p.Log)
	syncs := cron.New(cron.WithChain(cron.Recover(cl), cron.SkipIfStillRunning(cl)))
	for _, s := range cfg.Sources {
		if s.Mapping.Sync == "" {
			continue
		}
		if _, err := syncs.AddFunc(s.Mapping.Sync, func() { p.SyncIdentities(ctx, s.Name, client) }); err != nil {
			return nil, usageError("sources %s: mapping.sync %q: %v", s.Name, s.Mapping.Sync, err)
		}
	}
	syncs.Start()
	return func() { <-syncs.Stop().Done() }, nil
}

// startExports catches up the configured exports' missed ticks (in the background) and
// schedules them, their runs counted by m (nil: not counted); stop ends the schedule, then
// waits for the catch-up. Without exports it starts nothing.
func startExports(ctx context.Context, cfg *Config, store database, client *api.Client, m export.Metrics, p *bridge.Pipeline, log *slog.Logger) (stop func(), err error) {
	if len(cfg.Exports) == 0 {
		return func() {}, nil
	}
	exports := make([]*export.Config, len(cfg.Exports))
	for i := range cfg.Exports {
		exports[i] = &cfg.Exports[i]
	}
	// One run of an export at a time across replicas, under a lease like the replica's others: a
	// replica killed mid-run is taken over after replica.lease.
	ex := &export.Exporter{Store: store, API: client, Log: log, Metrics: m, Lease: cfg.Replica.Lease, Replica: cfg.Replica.Name}
	ex.Gone = func(ctx context.Context, id string) { // a download's 404 ends the job deleted
		if _, err := p.GoneUpstream(ctx, id, "an export's download"); err != nil && ctx.Err() == nil {
			log.Warn("export: transcription deleted upstream", "transcription", id, "error", err)
		}
	}
	caughtUp := make(chan struct{})
	go func() { // a tick missed while the bridge was down runs once now
		defer close(caughtUp)
		if err := ex.CatchUp(ctx, exports); err != nil && ctx.Err() == nil {
			log.Error("export catch-up", "error", err)
		}
	}()
	stopExports, err := ex.Schedule(ctx, exports)
	if err != nil {
		<-caughtUp
		return nil, usageError("%v", err)
	}
	return func() {
		stopExports()
		<-caughtUp
	}, nil
}
