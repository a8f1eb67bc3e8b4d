package main

import (
	"os"
	"path/filepath"
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
		{"api: {colour: red}\nsources: [{name: a, type: localdir}]", "invalid keys: colour"},
		{"sources: []", "sources: nothing to do: configure at least one source, export or webhook"},
		{"sources: [{name: a}]", "sources[0].type: required"},
		{"sources: [{name: a, type: localdir}, {name: a, type: localdir}]", `sources[1].name: "a" is used twice`},
		{"sources: [{name: a, type: localdir, schedule: 'every day'}]", "sources[0].schedule"},
		{"sources: [{name: a, type: localdir, upload: {reports: [a, b, c, d]}}]", "sources[0].upload.reports"},
		{"api: {base_url: 'https://x'}\nsources: [{name: a, type: localdir}]", "api.key_file: required"},
		{"api: {upload_concurrency: 11}\nsources: [{name: a, type: localdir}]", "api.upload_concurrency"},
		{"store: {driver: postgres}\nsources: [{name: a, type: localdir}]", "store.driver"},
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
