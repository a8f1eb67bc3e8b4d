package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/tracing"
	_ "github.com/transcript-bridge/bridge/connectors/gdrive"   // registers the gdrive source
	_ "github.com/transcript-bridge/bridge/connectors/localdir" // registers the localdir source
	_ "github.com/transcript-bridge/bridge/connectors/meet"     // registers the meet source
	_ "github.com/transcript-bridge/bridge/connectors/s3"       // registers the s3 source
	_ "github.com/transcript-bridge/bridge/connectors/teams"    // registers the teams source
	_ "github.com/transcript-bridge/bridge/connectors/zoom"     // registers the zoom source
	"github.com/transcript-bridge/bridge/mapping"
	"github.com/transcript-bridge/bridge/sandbox"
)

// configFlags are the flags of every subcommand that reads the configuration.
type configFlags struct {
	path string
	sets []string
}

func (f *configFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.path, "config", "", "configuration file (default configs/bridge.yaml when it exists, else the built-in defaults)")
	cmd.Flags().StringArrayVar(&f.sets, "set", nil, "override one setting, e.g. --set store.dsn=/var/lib/bridge.db (repeatable)")
}

func (f *configFlags) load() (*Config, error) {
	path, explicit := f.path, f.path != ""
	if !explicit {
		path = defaultConfigPath
	}
	cfg, err := loadConfig(path, explicit, f.sets)
	if err != nil {
		return nil, usageError("%v", err)
	}
	return cfg, nil
}

func newRunCmd() *cobra.Command {
	var cf configFlags
	var once bool
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the bridge: scan the sources, upload each recording once, track it to a finished transcript",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := cf.load()
			if err != nil {
				return err
			}
			if cf.path == "" {
				makeDefaultInbox(cfg, cmd.ErrOrStderr())
			}
			return runBridge(cmd.Context(), cfg, once, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cf.register(cmd)
	cmd.Flags().BoolVar(&once, "once", false, "process what is there and exit when every job is done, skipped, failed or held (exit 3 when some are held)")
	return cmd
}

// defaultInbox is the folder of the built-in default's source.
const defaultInbox = "./inbox"

// makeDefaultInbox creates the folder of the built-in default's local source when no
// configuration file exists (a first run in an empty directory), saying so.
func makeDefaultInbox(cfg *Config, w io.Writer) {
	if _, err := os.Stat(defaultConfigPath); err == nil {
		return // configs/bridge.yaml decides
	}
	for _, s := range cfg.Sources {
		path, _ := s.Options["path"].(string)
		if s.Type != "localdir" || path != defaultInbox {
			continue // a folder the user named must exist: a typo is an error, not a new folder
		}
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && os.MkdirAll(path, 0o755) == nil {
			notice(w, fmt.Sprintf("created %s: drop recordings there", path), "path", path)
		}
	}
}

// startTracing turns OpenTelemetry traces on when the OTEL_* variables ask for it
// (bridge/tracing); stop flushes what is left, for up to 5 s. A variable it cannot use refuses
// to start, naming it.
func startTracing(ctx context.Context, log *slog.Logger) (stop func(), on bool, err error) {
	shutdown, on, err := tracing.Setup(ctx, os.Getenv)
	if err != nil {
		return nil, false, usageError("tracing: %v", err)
	}
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := shutdown(sctx); err != nil {
			log.Warn("tracing: spans not all sent at exit", "error", err)
		}
	}, on, nil
}

// runBridge runs the bridge until ctx ends, or with once until every job is finished or waits:
// it checks the sources, opens the store, builds the pipeline, connects to the API, then starts
// the relay and (without once) the schedules, the exports and the server; each stops, in the
// reverse order, before the store closes.
func runBridge(ctx context.Context, cfg *Config, once bool, stdout, stderr io.Writer) error {
	log := newLogger(stderr)
	endpoints, err := buildEndpoints(cfg)
	if err != nil {
		return err
	}
	srcs, err := checkSources(cfg)
	if err != nil {
		return err
	}
	stopTracing, traced, err := startTracing(ctx, log)
	if err != nil {
		return err
	}
	defer stopTracing()
	if err := checkKeyFirst(ctx, cfg, once, log); err != nil { // a refused key creates nothing
		return err
	}
	store, err := openStoreWaiting(ctx, cfg, once, log)
	if err != nil {
		return stoppedWaiting(err, log)
	}
	defer store.Close()
	defer writerProcs(store)()
	log = watchDatabase(ctx, cfg, log, store)
	b, err := buildPipeline(ctx, cfg, srcs, store, log)
	if err != nil {
		return err
	}
	tel, err := newTelemetry(cfg, store, log)
	if err != nil {
		return err
	}
	p := b.pipeline
	p.Metrics = tel.metrics
	client, stopSandbox, err := connectAPIWith(ctx, cfg, tel.metrics, log)
	if err != nil {
		return err
	}
	defer stopSandbox()
	p.API = client
	b.members.Dir = client
	if err := checkSandboxScopes(ctx, cfg, client, b, once, log); err != nil {
		return err
	}
	log.Info("bridge running", "instance", p.Instance, "replica", p.Replica, "sources", len(p.Sources), "store", describeStore(cfg), "bus", cfg.Bus.Driver, "once", once, "gomaxprocs", runtime.GOMAXPROCS(0), "tracing", traced)
	rl, drainBus, stopRelay, err := startRelay(ctx, cfg, store, endpoints, client, once, tel.metrics, log)
	if err != nil {
		return err
	}
	defer stopRelay() // before the store closes
	if !once {
		stopSchedules, err := startSchedules(ctx, cfg, p, client)
		if err != nil {
			return err
		}
		defer stopSchedules()
		stopHousekeeping, err := startHousekeeping(ctx, cfg, store, client, tel, p, log)
		if err != nil {
			return err
		}
		defer stopHousekeeping()
		if len(b.pushers) > 0 || cfg.Server.Addr != "" || cfg.Server.MetricsAddr != "" {
			stopServer, err := serveHTTP(ctx, &serveDeps{cfg: cfg, store: store, pipeline: p, client: client, relay: rl, pushers: b.pushers, telemetry: tel, log: log})
			if err != nil {
				return err
			}
			defer stopServer()
		}
	}
	err = p.Run(ctx, bridge.RunOptions{Schedules: b.schedules, PollInterval: cfg.API.PollInterval, Once: once, KeepAlive: keepAliveFor(cfg, once)})
	if err != nil {
		return err
	}
	if once {
		return finishOnce(ctx, drainBus, rl, store, stdout, log)
	}
	log.Info("bridge stopped; uploads cut short resume with their key on the next start")
	return nil
}

// finishOnce ends a run --once: it delivers what is due now (retries scheduled later wait for
// the next run) and prints the jobs by state.
func finishOnce(ctx context.Context, drainBus func(context.Context) error, rl *relay.Relay, store database, stdout io.Writer, log *slog.Logger) error {
	if err := drainBus(ctx); err != nil {
		return err
	}
	if err := rl.Flush(ctx); err != nil {
		return fmt.Errorf("relay: %w", err)
	}
	log.Info("bridge stopped; uploads cut short resume with their key on the next start")
	return summarize(ctx, store, stdout)
}

// mappingRules are the mapping settings of source s, with the member list the owner rules read
// (nil: none): the one place a source's configuration becomes mapping.Rules.
func mappingRules(s SourceConfig, members *mapping.Members) mapping.Rules {
	return mapping.Rules{Author: s.Author, ExternalID: s.ExternalID, Metadata: s.Metadata,
		Provider: s.Mapping.Provider, Resolve: s.Mapping.Rules, Otherwise: s.Mapping.Otherwise, Members: members,
		Map: s.Mapping.Map, MapFile: s.Mapping.MapFile}
}

// newMapper builds the mapping of source s for this installation (instance) with the shared
// member list; the error names the setting at fault.
func newMapper(s SourceConfig, instance string, members *mapping.Members) (*mapping.Mapper, error) {
	return mapping.New(s.Name, s.Type, instance, mappingRules(s, members))
}

func cfgTypes(cfg *Config) map[string]string {
	out := map[string]string{}
	for _, s := range cfg.Sources {
		out[s.Name] = s.Type
	}
	return out
}

// requiredScopes are the key's rights bridge run needs: uploads:write, and reports:write when a
// source asks for reports (checkScopes and bridge doctor both ask for these).
func requiredScopes(needReports bool) []string {
	if needReports {
		return []string{"uploads:write", "reports:write"}
	}
	return []string{"uploads:write"}
}

// apiKeyError is the error of a key the service refused or that lacks a right: the service's
// answer, so a runtime failure (exit 1), not a usage error.
func apiKeyError(format string, args ...any) error {
	return &exitError{code: exitFailed, err: fmt.Errorf("api key: "+format, args...)}
}

// checkKeyFirst asks the service at api.base_url whether it accepts the configured key with
// the rights the configuration needs (checkScopes), before the store is opened: a wrong key
// creates no database. With the in-process sandbox (no base URL) it does nothing.
func checkKeyFirst(ctx context.Context, cfg *Config, once bool, log *slog.Logger) error {
	if cfg.API.BaseURL == "" {
		return nil
	}
	client, stop, err := connectAPIWith(ctx, cfg, nil, log)
	if err != nil {
		return err
	}
	defer stop()
	needReports, needMembers := false, false
	for _, s := range cfg.Sources {
		needReports = needReports || len(s.Upload.Reports) > 0
		needMembers = needMembers || slices.Contains(s.Mapping.Rules, mapping.RuleIdentity) || slices.Contains(s.Mapping.Rules, mapping.RuleEmail)
	}
	return checkScopes(ctx, client, needReports, needMembers, once, log)
}

// checkSandboxScopes is checkScopes for the in-process sandbox's key (the real service's key
// was checked before the store was opened, by checkKeyFirst).
func checkSandboxScopes(ctx context.Context, cfg *Config, client *api.Client, b *pipelineSetup, once bool, log *slog.Logger) error {
	if cfg.API.BaseURL != "" {
		return nil
	}
	return checkScopes(ctx, client, b.needReports, b.needMembers, once, log)
}

// checkScopes refuses to start when the key is refused or lacks a right the configuration
// needs (exit 1, naming the key problem). When the service cannot be reached, a one-shot run
// (once) fails with the reason; a long-running one warns and waits it out.
func checkScopes(ctx context.Context, c *api.Client, needReports, needMembers, once bool, log *slog.Logger) error {
	want := requiredScopes(needReports)

	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	missing, err := c.MissingScopes(cctx, want...)
	if e := api.AsError(err); e != nil && (e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden) {
		return apiKeyError("the service refused it: %v", err)
	}
	if err != nil && once {
		return fmt.Errorf("api.base_url: %w", err)
	}
	if err != nil {
		log.Warn("cannot reach the API yet; the bridge will keep trying", "error", err)
		return nil
	}
	if len(missing) > 0 {
		return apiKeyError("lacks the right(s) %s that the configured sources need", strings.Join(missing, ", "))
	}
	if needMembers { // the members endpoint has its own right, not listed among the key's scopes
		if _, err := c.Members(cctx); api.IsCode(err, "members_scope_required") || api.IsCode(err, "api_key_required") {
			return apiKeyError("mapping.rules need the member list, and this key cannot read it (%v): use a key that allows member management", err)
		}
	}
	return nil
}

// startLocalSandbox serves the sandbox on a loopback port for a bridge without an API URL.
func startLocalSandbox(ctx context.Context, cfg *Config, log *slog.Logger) (string, func(), error) {
	srv, err := sandbox.New(ctx, sandbox.Options{DBPath: cfg.Sandbox.DB, Seed: sandbox.LocalSeed(), TimeScale: cfg.Sandbox.TimeScale,
		Logf: func(f string, a ...any) { log.Warn(fmt.Sprintf(f, a...)) }})
	if err != nil {
		return "", nil, fmt.Errorf("sandbox: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		return "", nil, fmt.Errorf("sandbox: %w", err)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 30 * time.Second}
	go hs.Serve(ln)
	url := "http://" + ln.Addr().String() + sandbox.BasePath
	log.Warn("api.base_url is empty: using the IN-PROCESS SANDBOX; transcripts are synthetic. Set api.base_url and api.key_file for the real service.",
		"sandbox", url, "state", cfg.Sandbox.DB, "time_scale", cfg.Sandbox.TimeScale)
	return url, func() {
		hs.Shutdown(context.Background())
		srv.Close()
	}, nil
}

// summarize prints the job counts after --once; some jobs held makes exit code 3.
func summarize(ctx context.Context, store bridge.Store, w io.Writer) error {
	counts, err := store.Counts(ctx)
	if err != nil {
		return err
	}
	var parts []string
	for _, st := range bridge.States {
		if counts[st] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", st, counts[st]))
		}
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		parts = []string{"none"}
	}
	fmt.Fprintf(w, "jobs: %s\n", strings.Join(parts, ", "))
	if waiting := counts[bridge.StateHeld] + counts[bridge.StateResubmit]; waiting > 0 {
		return &exitError{code: exitWaiting, err: fmt.Errorf("%d job(s) wait (held or resubmit): see bridge jobs list --state held", waiting)}
	}
	return nil
}
