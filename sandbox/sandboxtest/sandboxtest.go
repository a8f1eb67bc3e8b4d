// Package sandboxtest starts the sandbox behind real HTTP on loopback for the tests of other
// packages, with a known seed, and checks the traffic against the OpenAPI description.
package sandboxtest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/transcript-bridge/bridge/internal/openapitest"
	"github.com/transcript-bridge/bridge/sandbox"
)

// Keys and ids of Seed.
const (
	OwnerKey    = "mk_live_test_owner_full"
	ReadKey     = "mk_live_test_readonly"
	SamKey      = "mk_live_test_sam_uploads"
	OtherKey    = "mk_live_test_other_full"
	FreeKey     = "mk_live_test_free_plan"
	OAuthToken  = "oauth_test_owner"
	WorkspaceID = "44444444-4444-4444-8444-444444444444"
	OwnerID     = "cccccccc-0000-4000-8000-000000000001"
	SamID       = "cccccccc-0000-4000-8000-000000000002"
	SalesID     = "dddddddd-0000-4000-8000-000000000001"
)

// Seed is the test workspace: Acme (600 minutes, concurrency 4) with an owner, Sam (identity
// zoom:u-1), the Sales project, three keys and an OAuth token; Other, a second workspace; and
// Free, a workspace whose plan has no API access.
func Seed() *sandbox.Seed {
	all := []string{"read", "uploads:write", "reports:write", "transcriptions:delete", "members:write"}
	return &sandbox.Seed{Workspaces: []sandbox.SeedWorkspace{
		{
			ID: WorkspaceID, Name: "Acme", Plan: "pro", BalanceMinutes: 600,
			Limits: sandbox.SeedLimits{Concurrency: 4},
			Members: []sandbox.SeedMember{
				{ID: OwnerID, Email: "owner@acme.test", Name: "Olivia Owner", Role: "owner"},
				{ID: SamID, Email: "sam@acme.test", Name: "Sam Seller", Role: "user",
					Identities: []sandbox.SeedIdentity{{Provider: "zoom", ExternalID: "u-1"}}},
			},
			Projects: []sandbox.SeedProject{{ID: SalesID, Name: "Sales"}},
			Prompts:  []sandbox.SeedPrompt{{Name: "Deal notes", Slug: "deal-notes", Scope: "workspace", Owner: "sam@acme.test"}},
			Keys: []sandbox.SeedKey{
				{Key: OwnerKey, Member: "owner@acme.test", Scopes: all},
				{Key: ReadKey, Member: "sam@acme.test", Scopes: []string{"read"}},
				{Key: SamKey, Member: "sam@acme.test", Scopes: []string{"read", "uploads:write"}},
				{Key: OAuthToken, Member: "owner@acme.test", Scopes: all},
			},
		},
		{
			Name: "Other", Plan: "expert", BalanceMinutes: 60,
			Members: []sandbox.SeedMember{{Email: "boss@other.test", Role: "owner"}},
			Keys:    []sandbox.SeedKey{{Key: OtherKey, Member: "boss@other.test", Scopes: all}},
		},
		{
			Name: "Free", Plan: "free", BalanceMinutes: 60,
			Members: []sandbox.SeedMember{{Email: "free@free.test", Role: "owner"}},
			Keys:    []sandbox.SeedKey{{Key: FreeKey, Member: "free@free.test", Scopes: all}},
		},
	}}
}

// Sandbox is a running sandbox.
type Sandbox struct {
	// Server is the sandbox itself.
	Server *sandbox.Server
	// URL is the API base URL, ending in /developer/v1.
	URL string
	// Root is the server's root URL (for the /_sandbox control surface).
	Root string
}

// Start runs a sandbox on a SQLite file in a temporary folder, seeded with Seed, processing
// at time scale 0.001 unless an option says otherwise. It stops when the test ends.
func Start(t testing.TB, opts ...func(*sandbox.Options)) *Sandbox {
	t.Helper()
	dir := t.TempDir()
	o := sandbox.Options{
		DBPath:    filepath.Join(dir, "sandbox.db"),
		Seed:      Seed(),
		TimeScale: 0.001,
		MediaDir:  dir,
		Logf:      t.Logf,
	}
	for _, opt := range opts {
		opt(&o)
	}
	srv, err := sandbox.New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ts.Close()
		srv.Close()
	})
	return &Sandbox{Server: srv, URL: ts.URL + sandbox.BasePath, Root: ts.URL}
}

// HTTPClient returns a client whose requests and answers are checked against the sandbox's
// OpenAPI description; mismatches fail t.
func HTTPClient(t testing.TB, next http.RoundTripper) *http.Client {
	return &http.Client{Transport: &openapitest.Transport{T: t, Spec: sandbox.OpenAPI, Prefix: sandbox.BasePath,
		CheckRequests: true, Next: next, Skip: []string{"/openapi.yaml"}}}
}

// Workspace returns the state of workspace id from the control surface (no faults apply there).
func (sb *Sandbox) Workspace(t testing.TB, id string) sandbox.WorkspaceState {
	t.Helper()
	resp, err := http.Get(sb.Root + sandbox.ControlPath + "/workspaces")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Items []sandbox.WorkspaceState }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	for _, ws := range out.Items {
		if ws.ID == id {
			return ws
		}
	}
	t.Fatalf("no workspace %s in the sandbox", id)
	return sandbox.WorkspaceState{}
}

// Journal returns the requests the sandbox answered.
func (sb *Sandbox) Journal(t testing.TB) []sandbox.JournalEntry {
	t.Helper()
	resp, err := http.Get(sb.Root + sandbox.ControlPath + "/journal?limit=100000")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Items []sandbox.JournalEntry }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Items
}
