package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

func TestConfigLayers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bridge.yaml")
	os.WriteFile(path, []byte(`
api: {poll_interval: 7s}
store: {dsn: ./from-file.db}
sources:
  - {name: inbox, type: localdir, path: ./inbox, upload: {reports: [summary]}}
`), 0o644)
	t.Setenv("BRIDGE_STORE__DSN", "/tmp/from-env.db")
	t.Setenv("BRIDGE_API_KEY", "mk_live_from_env")
	t.Setenv("BRIDGE_FAILPOINTS", "") // single-level variables are not configuration
	cfg, err := loadConfig(path, true, []string{"api.upload_concurrency=2"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Store.DSN != "/tmp/from-env.db" || cfg.API.Key != "mk_live_from_env" || cfg.API.PollInterval != 7*time.Second ||
		cfg.API.UploadConcurrency != 2 || cfg.Sources[0].Schedule != "@every 30s" || cfg.Sources[0].Options["path"] != "./inbox" {
		t.Errorf("config = %+v", cfg)
	}
	// Without a file: the built-in default.
	cfg, err = loadConfig(filepath.Join(dir, "absent.yaml"), false, nil)
	if err != nil || cfg.Sources[0].Name != "inbox" || cfg.Store.DSN != "/tmp/from-env.db" {
		t.Errorf("built-in default = %+v, %v", cfg, err)
	}
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"api: {colour: red}\nsources: [{name: a, type: localdir}]", "c.yaml:1:7: api.colour: unknown key (api takes base_url, key, key_file,"},
		{"sources: [{name: a, type: localdir, upload: {colour: red}}]", "c.yaml:1:46: sources[0].upload.colour: unknown key (sources[].upload takes language,"},
		{"webhooks: [{name: a, url: 'https://x'}, {name: b, colour: red}]", "c.yaml:1:51: webhooks[1].colour: unknown key (webhooks[] takes name, url,"},
		{"exports: [{name: a, filter: {colour: red}}]", "c.yaml:1:30: exports[0].filter.colour: unknown key"},
		{"api: {poll_interval: banana}\nsources: [{name: a, type: localdir}]", `c.yaml:1:22: api.poll_interval: "banana" is not a duration`},
		{"api: {upload_concurrency: many}\nsources: [{name: a, type: localdir}]", `c.yaml:1:27: api.upload_concurrency: "many" is not a whole number`},
		{"webhooks: [{name: a, retry_schedule: [5s, soon]}]", `c.yaml:1:43: webhooks[0].retry_schedule[1]: "soon" is not a duration`},
		{"api: 5\nsources: [{name: a, type: localdir}]", "c.yaml:1:6: api: want keys (base_url,"},
		{"sources: []", "c.yaml:1:1: sources: nothing to do: configure at least one source, export or webhook"},
		{"sources: [{name: a}]", "c.yaml:1:11: sources[0].type: required"},
		{"sources: [{name: a, type: localdir}, {name: a, type: localdir}]", `c.yaml:1:39: sources[1].name: "a" is used twice`},
		{"sources: [{name: a, type: localdir, schedule: 'every day'}]", "sources[0].schedule"},
		{"sources: [{name: a, type: localdir, upload: {reports: [a, b, c, d]}}]", "sources[0].upload.reports"},
		{"api: {base_url: 'https://x'}\nsources: [{name: a, type: localdir}]", "api.key_file: required"},
		{"api: {upload_concurrency: 11}\nsources: [{name: a, type: localdir}]", "api.upload_concurrency"},
		{"sources: [{name: b, type: s3, bucket: x, metadata: {team: '{{.Fields.team}}'}}]", `c.yaml:1:53: sources[0].metadata.team: "{{.Fields.team}}" reads .Fields, the objects' user metadata, which an s3 source reads (one HEAD per new object) only with user_metadata: true`},
		{"store: {driver: mysql}\nsources: [{name: a, type: localdir}]", `c.yaml:1:9: store.driver: "mysql" is not supported (sqlite or postgres)`},
		{"store: {driver: postgres}\nsources: [{name: a, type: localdir}]", "c.yaml:1:1: store.dsn: required with store.driver postgres"},
		{"store: {dsn: a.db, dsn_file: dsn.txt}\nsources: [{name: a, type: localdir}]", "c.yaml:1:20: store.dsn_file: set store.dsn or store.dsn_file, not both"},
		{"bus: {driver: kafka}\nsources: [{name: a, type: localdir}]", `c.yaml:1:7: bus.driver: "kafka" is not sql or nats`},
		{"bus: {url: 'nats://x:4222'}\nsources: [{name: a, type: localdir}]", "c.yaml:1:7: bus.url: set with bus.driver sql; it is for bus.driver nats"},
		{"bus: {driver: nats, url: 'http://x'}\nsources: [{name: a, type: localdir}]", "c.yaml:1:21: bus.url: \"http://x\": scheme is not nats"},
		{"bus: {driver: nats, max_in_flight: -1}\nsources: [{name: a, type: localdir}]", "c.yaml:1:21: bus.max_in_flight: -1 is below 1"},
		{"replica: {lease: 10ms}\nsources: [{name: a, type: localdir}]", "c.yaml:1:11: replica.lease: 10ms is below 1s"},
		{"relay: {interval: -1s}\nsources: [{name: a, type: localdir}]", "c.yaml:1:9: relay.interval: -1s is not positive"},
		{"relay: {lease: -2m}\nsources: [{name: a, type: localdir}]", "c.yaml:1:9: relay.lease: -2m0s is not positive"},
		{"webhooks: [{name: a, secrets: [x]}]", "c.yaml:1:22: webhooks[0].secrets: unknown key (webhooks[] takes name, url, secret_file, secret, events,"},
	}
	for _, tc := range tests {
		path := filepath.Join(t.TempDir(), "c.yaml")
		os.WriteFile(path, []byte(tc.yaml), 0o644)
		_, err := loadConfig(path, true, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("config %q: %v, want an error naming %q", tc.yaml, err, tc.want)
		}
	}
}

// TestExampleConfigsLoad: every file under configs/ and configs/examples/ is a valid
// configuration, and each source's options are accepted by its connector up to the secrets
// files they name (which exist only where the bridge is deployed).
func TestExampleConfigsLoad(t *testing.T) {
	paths, _ := filepath.Glob("../../configs/examples/*.yaml")
	paths = append(paths, "../../configs/bridge.yaml")
	if len(paths) < 3 {
		t.Fatalf("found %d example configs, want the examples and bridge.yaml", len(paths))
	}
	for _, p := range paths {
		cfg, err := loadConfig(p, true, nil)
		if err != nil {
			t.Errorf("loadConfig(%q) = %v", p, err)
			continue
		}
		for _, s := range cfg.Sources {
			if _, err := connectors.New(s.Type, s.Name, s.Options); err != nil && !strings.Contains(err.Error(), "/run/secrets/") && !strings.Contains(err.Error(), "path ./inbox") {
				t.Errorf("%s: source %s: %v", p, s.Name, err)
			}
		}
	}
}

// twoSources is a file with two sources, a webhook and an export, for the override tests.
const twoSources = `api:
  poll_interval: 7s
sources:
  - name: inbox
    type: localdir
    path: ./inbox
  - name: calls
    type: localdir
    path: ./calls
    upload: {reports: [summary]}
webhooks:
  - {name: crm, url: "https://crm.example/hooks", secret_file: ./whsec}
exports:
  - name: nightly
    schedule: "0 2 * * *"
    destination: ./exports
`

// TestConfigListOverrides: --set and BRIDGE_ variables address list items by index, for every
// list; the index one past the end adds an entry; values are typed as in the file.
func TestConfigListOverrides(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		sets []string
		got  func(*Config) any
		want any
	}{
		{"set source option", nil, []string{"sources.0.path=/x"}, func(c *Config) any { return c.Sources[0].Options["path"] }, "/x"},
		{"set with brackets", nil, []string{"sources[1].path=/y"}, func(c *Config) any { return c.Sources[1].Options["path"] }, "/y"},
		{"env source option", map[string]string{"BRIDGE_SOURCES__1__PATH": "/z"}, nil, func(c *Config) any { return c.Sources[1].Options["path"] }, "/z"},
		{"other entry kept", map[string]string{"BRIDGE_SOURCES__1__PATH": "/z"}, nil, func(c *Config) any { return c.Sources[0].Options["path"] }, "./inbox"},
		{"env nested list as commas", map[string]string{"BRIDGE_SOURCES__1__UPLOAD__REPORTS": "summary,topics"}, nil,
			func(c *Config) any { return strings.Join(c.Sources[1].Upload.Reports, "+") }, "summary+topics"},
		{"item of a scalar list", nil, []string{"sources.1.upload.reports.1=topics"},
			func(c *Config) any { return strings.Join(c.Sources[1].Upload.Reports, "+") }, "summary+topics"},
		{"bool", nil, []string{"sources.0.upload.diarize=true"}, func(c *Config) any { return *c.Sources[0].Upload.Diarize }, true},
		{"duration", map[string]string{"BRIDGE_SOURCES__0__RETRY_DEADLINE": "90m"}, nil, func(c *Config) any { return c.Sources[0].RetryDeadline }, 90 * time.Minute},
		{"durations as commas", nil, []string{"webhooks.0.retry_schedule=5s,1m"},
			func(c *Config) any { return fmt.Sprint(c.Webhooks[0].RetrySchedule) }, "[5s 1m0s]"},
		{"webhook header", map[string]string{"BRIDGE_WEBHOOKS__0__HEADERS__X_TEAM": "ops"}, nil, func(c *Config) any { return c.Webhooks[0].Headers["x_team"] }, "ops"},
		{"export", map[string]string{"BRIDGE_EXPORTS__0__DESTINATION": "s3://bucket/nightly"}, nil, func(c *Config) any { return c.Exports[0].Destination }, "s3://bucket/nightly"},
		{"export nested", nil, []string{"exports.0.filter.source=calls"}, func(c *Config) any { return c.Exports[0].Filter.Source }, "calls"},
		{"env then set", map[string]string{"BRIDGE_SOURCES__0__PATH": "/env"}, []string{"sources.0.path=/flag"}, func(c *Config) any { return c.Sources[0].Options["path"] }, "/flag"},
		{"new entry by env", map[string]string{"BRIDGE_SOURCES__2__NAME": "drop", "BRIDGE_SOURCES__2__TYPE": "localdir", "BRIDGE_SOURCES__2__PATH": "/drop"}, nil,
			func(c *Config) any {
				return fmt.Sprintf("%d %s %v %s", len(c.Sources), c.Sources[2].Name, c.Sources[2].Options["path"], c.Sources[2].Schedule)
			}, "3 drop /drop @every 30s"},
		{"new entry by set", nil, []string{"webhooks.1.name=audit", "webhooks.1.url=https://audit.example", "webhooks.1.events=job.failed,job.held"},
			func(c *Config) any {
				return fmt.Sprintf("%d %s %v", len(c.Webhooks), c.Webhooks[1].Name, c.Webhooks[1].Events)
			}, "2 audit [job.failed job.held]"},
	}
	path := filepath.Join(t.TempDir(), "bridge.yaml")
	os.WriteFile(path, []byte(twoSources), 0o644)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			cfg, err := loadConfig(path, true, tc.sets)
			if err != nil {
				t.Fatalf("loadConfig(env %v, --set %q) = %v", tc.env, tc.sets, err)
			}
			if got := tc.got(cfg); got != tc.want {
				t.Errorf("loadConfig(env %v, --set %q) = %v, want %v", tc.env, tc.sets, got, tc.want)
			}
		})
	}
}

// TestConfigOverrideErrors: an error in a variable names the variable, in a flag the flag, in
// the file the file's line and column; each then names the key.
func TestConfigOverrideErrors(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		sets []string
		want string
	}{
		{"env bad duration", map[string]string{"BRIDGE_API__POLL_INTERVAL": "banana"}, nil,
			`environment BRIDGE_API__POLL_INTERVAL: api.poll_interval: "banana" is not a duration`},
		{"env below minimum", map[string]string{"BRIDGE_API__POLL_INTERVAL": "10ms"}, nil,
			`environment BRIDGE_API__POLL_INTERVAL: api.poll_interval: 10ms is below 1s`},
		{"set bad duration", nil, []string{"api.poll_interval=banana"}, `--set api.poll_interval: api.poll_interval: "banana" is not a duration`},
		{"set bad int", nil, []string{"api.upload_concurrency=four"}, `--set api.upload_concurrency: api.upload_concurrency: "four" is not a whole number`},
		{"set out of range", nil, []string{"api.upload_concurrency=40"}, `--set api.upload_concurrency: api.upload_concurrency: 40 is not 1 to 10`},
		{"set bad bool", nil, []string{"sources.0.upload.diarize=maybe"}, `--set sources.0.upload.diarize: sources[0].upload.diarize: "maybe" is not true or false`},
		{"env bad list item", map[string]string{"BRIDGE_WEBHOOKS__0__RETRY_SCHEDULE": "5s,soon"}, nil,
			`environment BRIDGE_WEBHOOKS__0__RETRY_SCHEDULE: webhooks[0].retry_schedule[1]: "soon" is not a duration`},
		{"env unknown key", map[string]string{"BRIDGE_API__COLOUR": "red"}, nil,
			"environment BRIDGE_API__COLOUR: api.colour: unknown key (api takes base_url,"},
		{"set unknown key in entry", nil, []string{"webhooks.0.colour=red"}, "--set webhooks.0.colour: webhooks[0].colour: unknown key (webhooks[] takes name,"},
		{"set unknown nested", nil, []string{"sources.1.upload.colour=red"}, "--set sources.1.upload.colour: sources[1].upload.colour: unknown key (sources[].upload takes"},
		{"index beyond", nil, []string{"sources.3.path=/x"}, "--set sources.3.path: sources[3]: no such entry: sources has 2 (sources.2 adds one)"},
		{"env index beyond", map[string]string{"BRIDGE_EXPORTS__5__KEEP": "3"}, nil,
			"environment BRIDGE_EXPORTS__5__KEEP: exports[5]: no such entry: exports has 1 (exports.1 adds one)"},
		{"not an index", nil, []string{"sources.inbox.path=/x"}, "--set sources.inbox.path: sources.inbox: sources is a list: address an entry by its index (sources.0)"},
		{"section", nil, []string{"api=x"}, "--set api: api: is a section, not a value: set its keys (base_url,"},
		{"below a value", nil, []string{"api.poll_interval.x=1"}, "--set api.poll_interval.x: api.poll_interval.x: unknown key: api.poll_interval is a value, not a section"},
		{"no value", nil, []string{"api.poll_interval"}, `--set "api.poll_interval": want key=value`},
		{"new entry incomplete", nil, []string{"sources.2.name=drop"}, "--set sources.2.name: sources[2].type: required"},
		{"new entry by env incomplete", map[string]string{"BRIDGE_SOURCES__2__TYPE": "localdir"}, nil, "environment BRIDGE_SOURCES__2__TYPE: sources[2].name: required"},
		{"duplicate via set", nil, []string{"sources.1.name=inbox"}, `--set sources.1.name: sources[1].name: "inbox" is used twice`},
		{"validate error in the file", nil, []string{"sources.1.schedule=every day"}, `--set sources.1.schedule: sources[1].schedule: "every day"`},
		{"file key without override", map[string]string{"BRIDGE_STORE__DRIVER": "mysql"}, nil, `environment BRIDGE_STORE__DRIVER: store.driver: "mysql" is not supported`},
		{"squashed key by env", map[string]string{"BRIDGE_BUS__DRIVER": "nats", "BRIDGE_BUS__ACK_WAIT": "1ms"}, nil, `environment BRIDGE_BUS__ACK_WAIT: bus.ack_wait: 1ms is below 100ms`},
	}
	path := filepath.Join(t.TempDir(), "bridge.yaml")
	os.WriteFile(path, []byte(twoSources), 0o644)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			_, err := loadConfig(path, true, tc.sets)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("loadConfig(env %v, --set %q) = %v, want %q", tc.env, tc.sets, err, tc.want+"…")
			}
		})
	}
}

// TestConfigFileErrorPositions: an error in the file gives the line and column actually at
// fault (yaml.v3 itself often names the line where the enclosing block began).
func TestConfigFileErrorPositions(t *testing.T) {
	lines := strings.Split(twoSources+"    keep: 7\n", "\n")
	if lines[16] != "    keep: 7" {
		t.Fatalf("line 17 is %q", lines[16])
	}
	// Line 17 is the export's keep; each case replaces it.
	tests := []struct{ line17, want string }{
		{`    author: "email:ops@acme.test`, `bridge.yaml:17:13: unclosed quote (")`},
		{`    author: 'email:ops@acme.test`, `bridge.yaml:17:13: unclosed quote (')`},
		{`   author: "email:ops@acme.test"`, `bridge.yaml:17:4: did not find expected '-' indicator (check the indentation)`},
		{`      author: "email:ops@acme.test"`, `bridge.yaml:17:13: mapping values are not allowed in this context`},
		{"\tauthor: x", `bridge.yaml:17:1: found a tab character that violates indentation`},
		{`    author: a: b`, `bridge.yaml:17:14: mapping values are not allowed in this context`},
		{`    author: [email:ops@acme.test`, `bridge.yaml:17:13: did not find expected ',' or ']'`},
		{`    author: {email: ops@acme.test`, `bridge.yaml:17:13: did not find expected ',' or '}'`},
		{`    author: @ops`, `bridge.yaml:17:13: found character that cannot start any token`},
		{`    schedule: "@daily"`, `bridge.yaml:17:5: mapping key "schedule" already defined at line 15`},
		{`    author: "email:ops@acme.test"`, `bridge.yaml:17:5: exports[0].author: unknown key (exports[] takes name,`},
		{`    keep: -1`, `bridge.yaml:17:5: exports[0].keep: -1 is negative`},
		{`    keep: lots`, `bridge.yaml:17:11: exports[0].keep: "lots" is not a whole number`},
	}
	for _, tc := range tests {
		path := filepath.Join(t.TempDir(), "bridge.yaml")
		l := slices.Clone(lines)
		l[16] = tc.line17
		os.WriteFile(path, []byte(strings.Join(l, "\n")), 0o644)
		_, err := loadConfig(path, true, nil)
		if want := "config " + filepath.Dir(path) + "/" + tc.want; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("loadConfig(line 17 %q) = %v, want %q", tc.line17, err, want+"…")
		}
	}
}

func TestYAMLSyntaxError(t *testing.T) {
	tests := []struct {
		yaml     string
		line     int
		col      int
		wantText string
	}{
		{"a: 1\nb: \"x\n", 2, 4, "unclosed quote"},
		{"a:\n  b: 1\n c: 2\n", 3, 2, ""},
		{"- a\n", 1, 1, "the file must hold keys"},
		{"a: 1\n\n\n# note\nb: [1, 2\n", 5, 4, "did not find expected"},
		{"a: 1\r\nb: 'x\r\n", 2, 4, "unclosed quote"},
		{"a: \"é\" é: 1\n", 1, 8, "mapping values"},
	}
	for _, tc := range tests {
		line, col, msg, ok := yamlSyntaxError([]byte(tc.yaml))
		if !ok || line != tc.line || col != tc.col || !strings.Contains(msg, tc.wantText) {
			t.Errorf("yamlSyntaxError(%q) = %d:%d %q %v, want %d:%d %q", tc.yaml, line, col, msg, ok, tc.line, tc.col, tc.wantText)
		}
	}
	if _, _, _, ok := yamlSyntaxError([]byte("a: 1\n")); ok {
		t.Errorf("yamlSyntaxError(valid) = ok, want not ok")
	}
}

func TestComparePaths(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"sources.2.name", "sources.10.name", -1},
		{"sources.10.name", "sources.9.path", 1},
		{"sources.1.name", "sources.1.path", -1},
		{"api.key", "api.key", 0},
		{"api", "api.key", -1},
		{"exports.0", "api.key", 1},
	}
	for _, tc := range tests {
		if got := comparePaths(strings.Split(tc.a, "."), strings.Split(tc.b, ".")); got != tc.want {
			t.Errorf("comparePaths(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestBuildEndpoints: webhooks load into relay.EndpointConfig and buildEndpoints reads their
// secrets (secret_file or an inline secret); an error names where the setting was written, then
// the entry and the key, and never shows the secret.
func TestBuildEndpoints(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	dir := t.TempDir()
	path := filepath.Join(dir, "bridge.yaml")
	os.WriteFile(path, []byte(twoSources), 0o644)
	os.WriteFile(filepath.Join(dir, "whsec"), []byte(secret+"\n"), 0o600)
	t.Chdir(dir)
	tests := []struct {
		sets []string
		want string
	}{
		{nil, ""},
		{[]string{"webhooks.0.secret_file=", "webhooks.0.secret=" + secret}, ""},
		{[]string{"webhooks.0.secret_file=", "webhooks.0.secret=MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, "--set webhooks.0.secret: webhooks[0].secret: must start with whsec_"},
		{[]string{"webhooks.0.secret_file="}, "--set webhooks.0.secret_file: webhooks[0].secret_file: a secret is required"},
		{[]string{"webhooks.0.timeout=2m"}, "--set webhooks.0.timeout: webhooks[0].timeout: 2m0s is not within 0 to 60s"},
		{[]string{"webhooks.1.name=crm", "webhooks.1.url=https://b.example"}, `--set webhooks.1.name: webhooks[1].name: "crm" is used twice`},
	}
	for _, tc := range tests {
		cfg, err := loadConfig(path, true, tc.sets)
		if err != nil {
			t.Fatalf("loadConfig(--set %q) = %v", tc.sets, err)
		}
		eps, err := buildEndpoints(cfg)
		switch {
		case tc.want == "" && (err != nil || len(eps) != 1 || len(eps[0].Secrets) != 1 || eps[0].Name != "crm"):
			t.Errorf("buildEndpoints(--set %q) = %v, %v; want crm with its secret", tc.sets, eps, err)
		case tc.want != "" && (err == nil || !strings.HasSuffix(err.Error(), tc.want)):
			t.Errorf("buildEndpoints(--set %q) = %v, want …%s", tc.sets, err, tc.want)
		case err != nil && strings.Contains(err.Error(), "MfKQ9r8"):
			t.Errorf("buildEndpoints(--set %q) = %v: shows the secret", tc.sets, err)
		}
	}
}
