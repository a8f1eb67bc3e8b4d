package main

import (
	"os"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/transcript-bridge/bridge/bridge/server/status"
)

// TestComposeStatusPage (issue 31, point 9): compose.yaml's bridge and its replicas get the
// secret admin_token, compose's configuration reads it as server.admin_token_file, and the demo
// file is a token the status page accepts: the page at :8080 asks for it (scripts/
// container-check.sh signs in with it).
func TestComposeStatusPage(t *testing.T) {
	b, err := os.ReadFile("../../compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Services map[string]composeService        `yaml:"services"`
		Secrets  map[string]struct{ File string } `yaml:"secrets"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"bridge", "replica-1", "replica-2"} {
		if !slices.Contains(f.Services[name].Secrets, "admin_token") {
			t.Errorf("compose service %s has the secrets %v, want admin_token among them", name, f.Services[name].Secrets)
		}
	}
	sec, ok := f.Secrets["admin_token"]
	if !ok {
		t.Fatal("compose.yaml defines no secret admin_token")
	}
	if _, err := status.ReadToken("../../" + sec.File); err != nil {
		t.Errorf("the secret admin_token (%s) is not a token the status page takes: %v", sec.File, err)
	}
	cfg, err := loadConfig("../../configs/docker/postgres.yaml", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.AdminTokenFile != "/run/secrets/admin_token" {
		t.Errorf("compose's configuration: server.admin_token_file %q, want /run/secrets/admin_token", cfg.Server.AdminTokenFile)
	}
}
