package main

// bridge doctor: every check an admin would otherwise make by hand before (or instead of)
// reading logs, one line each with the fix. It reuses what bridge run does to start (loading
// the configuration, the API client, the schema versions, the NATS publisher, the sources'
// Check, buildEndpoints, relay.Send) and changes nothing: no database is created or migrated.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge/natsbus"
	"github.com/transcript-bridge/bridge/mapping"
)

// The statuses of a doctor check: FAIL makes the exit code 1, warn does not.
const (
	checkOK   = "ok"
	checkFail = "FAIL"
	checkWarn = "warn"
)

// doctorCheck is one line of bridge doctor's report.
type doctorCheck struct {
	// Status is ok, FAIL or warn.
	Status string `json:"status"`
	// Check names what was checked: config, api, api key, store, bus, source NAME, webhook NAME.
	Check string `json:"check"`
	// Detail says what was found.
	Detail string `json:"detail"`
	// Fix says what to do about a failure or a warning.
	Fix string `json:"fix,omitempty"`
}

// doctorReport is what bridge doctor prints: one check a line in a table, or this document in
// JSON and YAML.
type doctorReport struct {
	// Items are the checks, in the order they ran.
	Items []doctorCheck `json:"items"`
	// Failed counts the checks with status FAIL.
	Failed int `json:"failed"`
	// Warnings counts the checks with status warn.
	Warnings int `json:"warnings"`
}

func (r *doctorReport) add(status, check, detail, fix string) {
	r.Items = append(r.Items, doctorCheck{Status: status, Check: check, Detail: api.Redact(detail), Fix: fix})
	switch status {
	case checkFail:
		r.Failed++
	case checkWarn:
		r.Warnings++
	}
}

func (r *doctorReport) ok(check, detail string)        { r.add(checkOK, check, detail, "") }
func (r *doctorReport) fail(check, detail, fix string) { r.add(checkFail, check, detail, fix) }
func (r *doctorReport) warn(check, detail, fix string) { r.add(checkWarn, check, detail, fix) }

// table prints "status  check  detail — fix", one check a line.
func (r *doctorReport) table(w io.Writer) {
	for _, c := range r.Items {
		line := fmt.Sprintf("%-4s  %s  %s", c.Status, c.Check, c.Detail)
		if c.Fix != "" {
			line += " — " + c.Fix
		}
		fmt.Fprintln(w, strings.ReplaceAll(line, "\n", " "))
	}
}

// newDoctorCmd is doctor: check everything bridge run needs and say what to fix.
func newDoctorCmd() *cobra.Command {
	var cf configFlags
	var format string
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the configuration, API key, store, bus, sources and webhooks; print each problem with its fix (exit 1 on a failure)",
		Long: `Check what bridge run needs, one line each: "ok|FAIL|warn  what  detail — the fix".

  config      the configuration loads (file, BRIDGE_ variables, --set)
  api, key    api.base_url answers, and the key has the rights the sources need (uploads:write,
              reports:write when a source asks for reports, the member list when a mapping
              reads it)
  store       the database exists (a SQLite file is never created) and its schema version
              against this binary's
  bus         bus.driver nats: the server answers with JetStream; sql: the store's own
  source      each source's credentials and access (the connector's check, else a listing)
  webhook     each endpoint answers 2xx to a signed ping event (type "ping") that its receiver
              can verify like any delivery, and is not disabled

It changes nothing (no database is created or migrated). Exit 0 when no check fails (warnings
allowed), 1 otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r := runDoctor(cmd.Context(), &cf)
			if err := printOutput(cmd.OutOrStdout(), format, r, r.table); err != nil {
				return err
			}
			if r.Failed > 0 {
				return &exitError{code: exitFailed, err: fmt.Errorf("doctor: %d check(s) failed", r.Failed)}
			}
			return nil
		},
	}
	cf.register(cmd)
	addOutputFlag(cmd, &format, formatTable)
	return cmd
}

// runDoctor runs every check in order; a configuration that does not load stops it there.
func runDoctor(ctx context.Context, cf *configFlags) *doctorReport {
	r := &doctorReport{Items: []doctorCheck{}}
	cfg, err := cf.load()
	if err != nil {
		r.fail("config", err.Error(), "correct the setting named (--config FILE reads another file)")
		return r
	}
	r.ok("config", fmt.Sprintf("%s: %d source(s), %d webhook(s), %d export(s)",
		cfg.origins.fallback, len(cfg.Sources), len(cfg.Webhooks), len(cfg.Exports)))
	doctorAPI(ctx, cfg, r)
	current := doctorStore(ctx, cfg, r)
	doctorBus(cfg, current, r)
	doctorSources(ctx, cfg, r)
	doctorWebhooks(ctx, cfg, current, r)
	return r
}

// doctorAPI checks that api.base_url answers and what the key may do. With no base URL bridge
// run starts a sandbox in-process: that is a warning, and nothing is started here.
func doctorAPI(ctx context.Context, cfg *Config, r *doctorReport) {
	if cfg.API.BaseURL == "" {
		r.warn("api", "api.base_url is empty: bridge run uses the in-process sandbox (synthetic transcripts)",
			"set api.base_url and api.key_file (or BRIDGE_API_KEY) for the real service")
		return
	}
	client, _, err := connectAPI(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		r.fail("api key", err.Error(), "set api.key_file to a file holding the key (or BRIDGE_API_KEY), and api.base_url to the service's URL")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ws, err := client.Workspace(ctx)
	if e := api.AsError(err); e != nil && (e.Status == 401 || e.Status == 403) {
		r.fail("api key", "refused: "+err.Error(), "create a key in the workspace and put it in the file api.key_file names (or BRIDGE_API_KEY)")
		return
	} else if err != nil {
		r.fail("api", err.Error(), "check api.base_url, DNS, the firewall and HTTPS_PROXY")
		return
	}
	r.ok("api", fmt.Sprintf("%s answers: workspace %s, %.0f minute(s) available", cfg.API.BaseURL, ws.Workspace.Name, ws.Balance.AvailableMinutes))
	if ws.Balance.AvailableMinutes <= 0 {
		r.warn("api balance", "no minutes available: uploads wait (held) until the balance allows", "top up the workspace's balance")
	}
	if exp := ws.Key.ExpiresAt; exp != nil && time.Until(*exp) < 14*24*time.Hour {
		r.warn("api key", "expires "+exp.UTC().Format(time.RFC3339), "create a new key and replace the one in api.key_file before then")
	}
	doctorScopes(ctx, cfg, client, r)
}

// doctorScopes checks the rights bridge run's checkScopes asks for, naming for each missing one
// the setting that needs it.
func doctorScopes(ctx context.Context, cfg *Config, client *api.Client, r *doctorReport) {
	var reports, members []string // the sources that need reports:write, the member list
	for _, s := range cfg.Sources {
		if len(s.Upload.Reports) > 0 {
			reports = append(reports, s.Name)
		}
		if slices.Contains(s.Mapping.Rules, mapping.RuleIdentity) || slices.Contains(s.Mapping.Rules, mapping.RuleEmail) {
			members = append(members, s.Name)
		}
	}
	want := requiredScopes(len(reports) > 0)
	missing, err := client.MissingScopes(ctx, want...)
	if err != nil {
		r.fail("api key", "scopes: "+err.Error(), "check api.base_url and the key")
		return
	}
	for _, m := range missing {
		fix := "create a key with " + m + ": bridge run refuses to start without it"
		if m == "reports:write" {
			fix = "create a key with reports:write, or remove upload.reports from source(s) " + strings.Join(reports, ", ")
		}
		r.fail("api key", "missing scope "+m, fix)
	}
	if len(missing) == 0 {
		r.ok("api key", "has "+strings.Join(want, ", "))
	}
	if len(members) == 0 {
		return
	}
	if _, err := client.Members(ctx); api.IsCode(err, "members_scope_required") || api.IsCode(err, "api_key_required") {
		r.fail("api key", "cannot read the member list, which mapping.rules identity and email need: "+err.Error(),
			"use a key that allows member management, or drop identity and email from mapping.rules of source(s) "+strings.Join(members, ", "))
	} else if err != nil {
		r.fail("api key", "member list: "+err.Error(), "check api.base_url and the key")
	} else {
		r.ok("api key", "reads the member list (mapping.rules of "+strings.Join(members, ", ")+")")
	}
}

// doctorStore checks the database without creating or migrating it, and reports whether its
// schema is this binary's (only then are the store and its bus used by the later checks).
func doctorStore(ctx context.Context, cfg *Config, r *doctorReport) (current bool) {
	if err := sqliteMissing(cfg); err != nil {
		r.fail("store", err.Error(), "run bridge migrate (or bridge run) with this configuration to create it, or point store.dsn at the existing file")
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	db, known, err := schemaVersions(ctx, cfg)
	what := describeStore(cfg)
	switch {
	case err != nil:
		r.fail("store", err.Error(), "check store.dsn (or store.dsn_file): host, port, database, user and password")
	case db > known:
		r.fail("store", fmt.Sprintf("%s: schema version %d is newer than this bridge knows (%d)", what, db, known),
			"run the bridge version that migrated it, or upgrade this one")
	case db < known:
		r.warn("store", fmt.Sprintf("%s: schema version %d, this bridge carries %d", what, db, known),
			"run bridge migrate before starting the replicas of this version (bridge run also migrates on start)")
	default:
		r.ok("store", fmt.Sprintf("%s: schema version %d, current", what, db))
		doctorStoreMode(cfg, r)
		return true
	}
	return false
}

// doctorStoreMode warns when a SQLite store's file or folder may be read by other users: names,
// e-mail addresses and transcripts live there (new stores are made 0700 and 0600).
func doctorStoreMode(cfg *Config, r *doctorReport) {
	if cfg.Store.Driver != "sqlite" {
		return
	}
	for _, p := range []string{filepath.Dir(cfg.Store.DSN), cfg.Store.DSN} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o077 != 0 {
			r.warn("store", fmt.Sprintf("%s is %v: other users of the machine may read it", p, fi.Mode().Perm()),
				fmt.Sprintf("chmod go-rwx %s (and its -wal and -shm files)", p))
		}
	}
}

// doctorBus checks the event bus: NATS answers with JetStream and the stream exists (creating
// it, as bridge run would), or the store's own database carries it.
func doctorBus(cfg *Config, storeCurrent bool, r *doctorReport) {
	if cfg.Bus.Driver != "nats" {
		if storeCurrent {
			r.ok("bus", "sql: the store's own database")
		} else {
			r.warn("bus", "sql: the store's own database, not ready", "fix the store first")
		}
		return
	}
	ncfg, err := cfg.Bus.nats()
	if err != nil {
		r.fail("bus", err.Error(), "fix bus.url or bus.url_file")
		return
	}
	pub, err := natsbus.NewPublisher(ncfg, nil)
	if err != nil {
		r.fail("bus", err.Error(), "start NATS with JetStream (nats-server -js) where bus.url points, or set bus.driver: sql")
		return
	}
	pub.Close()
	r.ok("bus", "nats: JetStream answers at bus.url, stream "+ncfg.Stream)
}
