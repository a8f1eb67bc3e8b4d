package teams_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/teams"
)

// TestOptions: each bad option is an *connectors.OptionError naming it.
func TestOptions(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	os.WriteFile(secret, []byte("s3cret\n"), 0o600)
	long := filepath.Join(dir, "long")
	os.WriteFile(long, []byte(strings.Repeat("x", 129)), 0o600)
	base := func() map[string]any {
		return map[string]any{"tenant_id": "t", "client_id": "c", "client_secret_file": secret}
	}
	for _, tc := range []struct {
		name string
		set  map[string]any
		key  string // "" for no error
	}{
		{"minimal", nil, ""},
		{"no tenant", map[string]any{"tenant_id": ""}, "tenant_id"},
		{"no secret", map[string]any{"client_secret_file": ""}, "client_secret_file"},
		{"missing secret file", map[string]any{"client_secret_file": filepath.Join(dir, "none")}, "client_secret_file"},
		{"organizers", map[string]any{"organizers": []any{"sam@acme.test", "0c7e0001-58a1-4b6e-9f3d-000000000001"}}, ""},
		{"all and more", map[string]any{"organizers": []any{"all", "sam@acme.test"}}, "organizers"},
		{"not an e-mail", map[string]any{"organizers": "sam"}, "organizers"},
		{"groups", map[string]any{"organizers": []any{"group:team@acme.test", "group:9a1b0001-7c2d-4e3f-8a9b-000000000001"}}, ""},
		{"not a group", map[string]any{"organizers": "group:team"}, "organizers"},
		{"start date", map[string]any{"start_date": "2026-01-01"}, ""},
		{"bad start date", map[string]any{"start_date": "last year"}, "start_date"},
		{"graph url", map[string]any{"graph_url": "graph.microsoft.com"}, "graph_url"},
		{"notifications", map[string]any{"notifications": map[string]any{"public_url": "https://bridge.example.com", "client_state_file": secret}}, ""},
		{"notifications unknown key", map[string]any{"notifications": map[string]any{"public_url": "https://b.example.com", "secret": "x"}}, "notifications"},
		{"notifications without state", map[string]any{"notifications": map[string]any{"public_url": "https://b.example.com"}}, "notifications"},
		{"notifications over http", map[string]any{"notifications": map[string]any{"public_url": "http://b.example.com", "client_state_file": secret}}, "notifications"},
		{"notifications on loopback", map[string]any{"notifications": map[string]any{"public_url": "http://127.0.0.1:8080", "client_state_file": secret}}, ""},
		{"client state too long", map[string]any{"notifications": map[string]any{"public_url": "https://b.example.com", "client_state_file": long}}, "notifications"},
	} {
		opts := base()
		for k, v := range tc.set {
			opts[k] = v
		}
		_, err := connectors.New("teams", "teams", opts)
		var oe *connectors.OptionError
		if got := ""; tc.key == "" && err != nil || tc.key != "" && (!errors.As(err, &oe) || oe.Key != tc.key) {
			if oe != nil {
				got = oe.Key
			}
			t.Errorf("New(%q) = %v (option %q), want an error naming %q", tc.name, err, got, tc.key)
		}
	}
}

// TestPusherOnlyWithNotifications: the registry makes a connectors.Pusher only when
// notifications are set, so a source without them starts no HTTP server.
func TestPusherOnlyWithNotifications(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("s3cret"), 0o600)
	opts := map[string]any{"tenant_id": "t", "client_id": "c", "client_secret_file": secret}
	for _, push := range []bool{false, true} {
		if push {
			opts["notifications"] = map[string]any{"public_url": "https://bridge.example.com", "client_state_file": secret}
		}
		src, err := connectors.New("teams", "meetings", opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := src.(connectors.Pusher); ok != push {
			t.Errorf("with notifications %v the source is a Pusher: %v", push, ok)
		}
		if _, ok := src.(connectors.Checker); !ok {
			t.Errorf("with notifications %v the source has no Check", push)
		}
	}
	if def, ok := connectors.Defaults("teams"); !ok || def.(teams.Config).GraphURL != "https://graph.microsoft.com" {
		t.Errorf("Defaults(teams) = %+v", def)
	}
}
