package main

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	kyaml "github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
	"gopkg.in/yaml.v3"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/export"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/connectors"
)

// yamlDateToString turns a YAML date (since: 2026-01-01, decoded as a time) back into text for
// string settings.
func yamlDateToString(from, to reflect.Type, v any) (any, error) {
	if t, ok := v.(time.Time); ok && to.Kind() == reflect.String {
		if t.Equal(t.Truncate(24 * time.Hour)) {
			return t.Format("2006-01-02"), nil
		}
		return t.Format(time.RFC3339), nil
	}
	return v, nil
}

// docs/configuration.md, the configuration reference, is generated from the doc comments of
// Config and the connectors' options (see configref_test.go).
//go:generate go test -count=1 -run ^TestConfigReference$ . -configref.update

// defaultConfigPath is read when --config is not given and the file exists.
const defaultConfigPath = "configs/bridge.yaml"

// Config is the bridge's configuration: configs/bridge.yaml, then BRIDGE_* environment
// variables ("__" nests: BRIDGE_STORE__DSN), then --set key=value flags.
type Config struct {
	// API is the transcription service the bridge uploads to and polls.
	API APIConfig `koanf:"api"`
	// Store is the bridge's own database: jobs, deliveries, checkpoints.
	Store struct {
		// Driver is the database kind: sqlite (default; one file, one machine) or postgres
		// (several replicas on one PostgreSQL database).
		Driver string `koanf:"driver"`
		// DSN is the database: a file for sqlite (default ./data/bridge.db), a URL
		// postgres://user@host:5432/db?sslmode=… for postgres (prefer dsn_file when it holds a
		// password).
		DSN string `koanf:"dsn"`
		// DSNFile holds the DSN instead of dsn (a secret: it may carry the password).
		DSNFile string `koanf:"dsn_file"`
	} `koanf:"store"`
	// Bus carries the events from the store to the relay.
	Bus BusConfig `koanf:"bus"`
	// Replica says how this process shares the store with other replicas of the bridge.
	Replica struct {
		// Name names this replica, the holder of its leases (default: host, process id and a
		// random suffix).
		Name string `koanf:"name"`
		// Lease is how long this replica's claim on an upload, a source's scan or the tracker
		// lasts without renewal; a replica that dies is taken over after at most this long
		// (default 30s).
		Lease time.Duration `koanf:"lease"`
	} `koanf:"replica"`
	// Sandbox is the in-process stand-in for the service, used when api.base_url is empty.
	Sandbox struct {
		// DB is the in-process sandbox's state file (default ./data/sandbox.db).
		DB string `koanf:"db"`
		// TimeScale multiplies the in-process sandbox's processing times (default 0.05).
		TimeScale float64 `koanf:"time_scale"`
	} `koanf:"sandbox"`
	// Sources are where recordings come from.
	Sources []SourceConfig `koanf:"sources"`
	// Webhooks are the endpoints events are pushed to.
	Webhooks []relay.EndpointConfig `koanf:"webhooks"`
	// Exports are the scheduled archives of completed transcripts.
	Exports []export.Config `koanf:"exports"`
	// Server is the bridge's HTTP server: webhooks from sources (POST /hooks/<type>/<name>),
	// /healthz, /readyz, /metrics and the status page at /. bridge run starts it when addr is
	// set or a source takes webhooks.
	Server struct {
		// Addr is where it listens, host:port (default 127.0.0.1:8080 when only a source's
		// webhooks start it; the container image sets 0.0.0.0:8080).
		Addr string `koanf:"addr"`
		// AdminTokenFile holds the admin token of the status page at / (a secret, at least 16
		// characters): signing in compares it. Without one the bridge makes one (see
		// admin_without_token).
		AdminTokenFile string `koanf:"admin_token_file"`
		// AdminWithoutToken serves the status page without a sign-in, on a loopback addr only,
		// to local requests only (not through a proxy), and never while a source receives
		// webhooks from outside. Without it and without admin_token_file, the bridge makes a
		// token and keeps it in admin.token next to its SQLite store (./data otherwise).
		AdminWithoutToken bool `koanf:"admin_without_token"`
		// TrustedProxies are the reverse proxies in front of the server, as addresses or CIDR
		// ranges (10.0.0.0/8, 127.0.0.1). Only for a request from one of them does the status
		// page read X-Forwarded-For (the client's address, for sign-in limits and the audit log)
		// and X-Forwarded-Proto (https makes the session cookie Secure); from anyone else both
		// are ignored.
		TrustedProxies []string `koanf:"trusted_proxies"`
		// SecureCookies marks the status page's session cookie Secure however the request
		// arrived: set it when browsers reach the page over https through a proxy that is not
		// in trusted_proxies. Without it the cookie is Secure over TLS only.
		SecureCookies bool `koanf:"secure_cookies"`
		// MetricsAddr, when set (host:port), serves GET /metrics, /readyz and /healthz on a
		// listener of their own, and /metrics and /readyz no longer on addr: keep them off the
		// public listener (say 127.0.0.1:9090 for a local Prometheus).
		MetricsAddr string `koanf:"metrics_addr"`
	} `koanf:"server"`
	// Relay sends the events to the webhooks.
	Relay RelayConfig `koanf:"relay"`
	// Retention is how long the bridge keeps what it stores (docs/privacy.md).
	Retention RetentionConfig `koanf:"retention"`

	// origins remembers which file position, variable or flag set each key (for errors found
	// after loading); nil for a Config not made by loadConfig.
	origins *origins
}

// SourceConfig is one source; keys other than the common ones are the connector's options.
type SourceConfig struct {
	// Name identifies the source (jobs, external ids, bridge sources); unique.
	Name string `koanf:"name"`
	// Type is the connector: localdir, s3, gdrive, meet, zoom or teams.
	Type string `koanf:"type"`
	// Schedule is a cron spec for scans (default "@every 30s").
	Schedule string `koanf:"schedule"`
	// RetryDeadline is how long the source may keep failing in ways that may pass (HTML instead
	// of media, a short body, 5xx, 429, network failures) before its job is held as
	// source_unavailable, counted from the first such failure (default 72h).
	RetryDeadline time.Duration `koanf:"retry_deadline"`
	// Author is a static X-Author (email:... or user:...).
	Author string `koanf:"author"`
	// ExternalID is a template for X-External-Id.
	ExternalID string `koanf:"external_id"`
	// Metadata maps X-Metadata keys to templates.
	Metadata map[string]string `koanf:"metadata"`
	// Upload are the options every upload from this source is sent with.
	Upload struct {
		// Language is auto (detected) or a language code.
		Language string `koanf:"language"`
		// ProjectID is the project (a UUID) the transcriptions are filed under.
		ProjectID string `koanf:"project_id"`
		// Diarize set to false turns speaker separation off (default on).
		Diarize *bool `koanf:"diarize"`
		// SpeakersCount hints the number of speakers, 1 to 20 (0: not sent).
		SpeakersCount int `koanf:"speakers_count"`
		// AIMetadata asks for the AI layer (title, summary, topics, speaker names).
		AIMetadata bool `koanf:"ai_metadata"`
		// Reports are report template slugs to generate, at most 3 (summary, …).
		Reports []string `koanf:"reports"`
	} `koanf:"upload"`
	// Mapping turns the recording's owner (a Zoom host, a Drive owner) into X-Author.
	Mapping struct {
		// Provider is the identity provider of the source's users (default: the connector's).
		Provider string `koanf:"provider"`
		// Rules are tried in order: identity (external:<provider>:<id> when a member holds it),
		// email (a member with the owner's e-mail), map (the table), static (author).
		Rules []string `koanf:"rules"`
		// Otherwise is hold (default: the job waits until a rule matches), key_owner (upload as
		// the key's creator) or skip.
		Otherwise string `koanf:"otherwise"`
		// MapFile is a CSV of external user (id or e-mail), member (email:… or user:…).
		MapFile string `koanf:"map_file"`
		// Map is the same table inline.
		Map map[string]string `koanf:"map"`
		// Sync is a cron spec on which bridge run performs identities apply for this source
		// (binding its users from the map and by e-mail); empty: only by hand.
		Sync string `koanf:"sync"`
	} `koanf:"mapping"`
	// Options are the connector's own settings (path, include, ...).
	Options map[string]any `koanf:",remain"`
}

// builtinConfig is used when no configuration file exists: the embedded default.
var builtinConfig = map[string]any{
	"store.driver": "sqlite",
	"store.dsn":    "./data/bridge.db",
	"sources": []any{map[string]any{
		"name": "inbox", "type": "localdir", "path": defaultInbox, "schedule": "@every 10s",
		"author": "email:owner@acme.test",
		"upload": map[string]any{"language": "auto", "ai_metadata": true, "reports": []any{"summary"}},
	}},
}

// loadConfig reads the configuration: the file at path (or, when it does not exist and was not
// given explicitly, the built-in default), then the BRIDGE_ variables, then the --set flags.
// Every error names where the culprit was written (the file's line and column, the variable,
// the flag) and the key.
func loadConfig(path string, explicit bool, sets []string) (*Config, error) {
	k := koanf.New(".")
	orig := newOrigins("config " + path)
	if data, err := os.ReadFile(path); err == nil {
		var doc yaml.Node
		err := yaml.Unmarshal(data, &doc)
		if err == nil {
			err = k.Load(file.Provider(path), kyaml.Parser())
		}
		if err != nil {
			if line, col, msg, ok := yamlSyntaxError(data); ok {
				return nil, fmt.Errorf("config %s:%d:%d: %s", path, line, col, msg)
			}
			return nil, fmt.Errorf("config %s: %w", path, err)
		}
		filePositions(&doc, "", "config "+path, orig)
	} else if explicit || !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("config %s: %w", path, err)
	} else if err := k.Load(confmap.Provider(builtinConfig, "."), nil); err != nil {
		return nil, err
	} else {
		orig.fallback = "built-in configuration (no " + path + ")"
	}
	tree := k.Raw()
	overrides, err := setOverrides(sets)
	if err != nil {
		return nil, err
	}
	for _, o := range append(envOverrides(), overrides...) {
		if err := o.apply(tree, orig); err != nil {
			return nil, err
		}
	}
	if e := check(tree, reflect.TypeFor[Config](), nil); e != nil {
		return nil, fmt.Errorf("%s: %w", orig.of(strings.Join(e.at, "."), e.value), e)
	}
	var cfg Config
	d, err := mapstructure.NewDecoder(decoderConfig(&cfg))
	if err == nil {
		err = d.Decode(tree)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", orig.fallback, unwrapDecode(err))
	}
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, orig.attribute(err)
	}
	cfg.origins = orig
	return &cfg, nil
}

// sourceError is a usage error for source i's connector refusing its options: an option's
// error names the file position, variable or flag that set it, then the key.
func (c *Config) sourceError(i int, err error) error {
	var oe *connectors.OptionError
	if errors.As(err, &oe) && c.origins != nil {
		at := fmt.Sprintf("sources.%d.%s", i, strings.ToLower(oe.Key))
		return usageError("%s: sources[%d].%s: %v", c.origins.of(at, !oe.Unknown), i, oe.Key, oe.Err)
	}
	return usageError("sources[%d]: %v", i, err)
}

func unwrapDecode(err error) error {
	var de *mapstructure.DecodeError
	if errors.As(err, &de) {
		return de
	}
	return err
}

func (c *Config) setDefaults() {
	c.API.setDefaults()
	if c.Store.Driver == "" {
		c.Store.Driver = "sqlite"
	}
	if c.Store.DSN == "" && c.Store.DSNFile == "" && c.Store.Driver == "sqlite" {
		c.Store.DSN = "./data/bridge.db"
	}
	c.Bus.setDefaults()
	if c.Replica.Lease == 0 {
		c.Replica.Lease = bridge.DefaultLease
	}
	c.Relay.setDefaults()
	c.Retention.setDefaults()
	if c.Sandbox.DB == "" {
		c.Sandbox.DB = "./data/sandbox.db"
	}
	if c.Sandbox.TimeScale == 0 {
		c.Sandbox.TimeScale = 0.05
	}
	for i := range c.Sources {
		if c.Sources[i].Schedule == "" {
			c.Sources[i].Schedule = "@every 30s"
		}
		if c.Sources[i].RetryDeadline == 0 {
			c.Sources[i].RetryDeadline = bridge.DefaultRetryDeadline
		}
	}
}

// Validate checks what can be checked without touching the outside; the error names the key.
func (c *Config) Validate() error {
	switch {
	case c.Store.Driver != "sqlite" && c.Store.Driver != "postgres":
		return fmt.Errorf("store.driver: %q is not supported (sqlite or postgres)", c.Store.Driver)
	case c.Store.DSN != "" && c.Store.DSNFile != "":
		return errors.New("store.dsn_file: set store.dsn or store.dsn_file, not both")
	case c.Store.Driver == "postgres" && c.Store.DSN == "" && c.Store.DSNFile == "":
		return errors.New("store.dsn: required with store.driver postgres (postgres://user@host:5432/db, or store.dsn_file)")
	case c.Replica.Lease != 0 && c.Replica.Lease < time.Second:
		return fmt.Errorf("replica.lease: %v is below 1s", c.Replica.Lease)
	case c.Server.MetricsAddr != "" && c.Server.MetricsAddr == c.Server.Addr && !strings.HasSuffix(c.Server.MetricsAddr, ":0"):
		return fmt.Errorf("server.metrics_addr: %q is server.addr too: give it a listener of its own, or leave it empty", c.Server.MetricsAddr)
	}
	if _, err := c.trustedProxies(); err != nil {
		return err
	}
	for _, v := range []interface{ Validate() error }{&c.API, &c.Relay, &c.Bus, &c.Retention} {
		if err := v.Validate(); err != nil {
			return err
		}
	}
	switch {
	case c.Sandbox.TimeScale < 0:
		return fmt.Errorf("sandbox.time_scale: must be positive")
	case len(c.Sources) == 0 && len(c.Exports) == 0 && len(c.Webhooks) == 0:
		// An export-only or relay-only deployment needs no source; a config with none of the
		// three has nothing to do.
		return errors.New("sources: nothing to do: configure at least one source, export or webhook")
	}
	exportNames := map[string]bool{}
	for i := range c.Exports {
		if err := c.Exports[i].Validate(); err != nil {
			return fmt.Errorf("exports[%d].%v", i, err)
		}
		if exportNames[c.Exports[i].Name] {
			return fmt.Errorf("exports[%d].name: %q is used twice", i, c.Exports[i].Name)
		}
		exportNames[c.Exports[i].Name] = true
	}
	names := map[string]bool{}
	for i, s := range c.Sources {
		at := fmt.Sprintf("sources[%d]", i)
		switch {
		case s.Name == "":
			return fmt.Errorf("%s.name: required", at)
		case names[s.Name]:
			return fmt.Errorf("%s.name: %q is used twice", at, s.Name)
		case s.Type == "":
			return fmt.Errorf("%s.type: required", at)
		case len(s.Upload.Reports) > 3:
			return fmt.Errorf("%s.upload.reports: %d slugs; at most 3", at, len(s.Upload.Reports))
		case s.Upload.SpeakersCount < 0 || s.Upload.SpeakersCount > 20:
			return fmt.Errorf("%s.upload.speakers_count: %d is not 1 to 20", at, s.Upload.SpeakersCount)
		case s.RetryDeadline <= 0:
			return fmt.Errorf("%s.retry_deadline: %v is not positive", at, s.RetryDeadline)
		}
		names[s.Name] = true
		if err := s.fieldsWithoutMetadata(); err != nil {
			return fmt.Errorf("%s.%w", at, err)
		}
		if err := bridge.ParseSchedule(s.Schedule); err != nil {
			return fmt.Errorf("%s.schedule: %q: %w", at, s.Schedule, err)
		}
	}
	return nil
}

// fieldsWithoutMetadata refuses an s3 source whose templates read .Fields (each object's user
// metadata) while the source only lists: S3 gives user metadata only to a HEAD per object, which
// the source sends with user_metadata: true (or owner_from: meta:…). Without it every .Fields
// would be empty, silently.
func (s *SourceConfig) fieldsWithoutMetadata() error {
	if s.Type != "s3" {
		return nil
	}
	if on, err := strconv.ParseBool(fmt.Sprint(s.Options["user_metadata"])); err == nil && on {
		return nil
	}
	if from, _ := s.Options["owner_from"].(string); strings.HasPrefix(from, "meta:") {
		return nil
	}
	templates := map[string]string{"external_id": s.ExternalID, "author": s.Author}
	for k, v := range s.Metadata {
		templates["metadata."+k] = v
	}
	for _, key := range slices.Sorted(maps.Keys(templates)) {
		if strings.Contains(templates[key], ".Fields") {
			return fmt.Errorf("%s: %q reads .Fields, the objects' user metadata, which an s3 source reads (one HEAD per new object) only with user_metadata: true", key, templates[key])
		}
	}
	return nil
}
