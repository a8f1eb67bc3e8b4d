package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"gopkg.in/yaml.v3"
)

// Seed describes the workspaces the sandbox starts with. It is read from YAML (configs/sandbox.yaml).
type Seed struct {
	// Workspaces to create; at least one.
	Workspaces []SeedWorkspace `yaml:"workspaces"`
}

// SeedWorkspace is one workspace of a Seed.
type SeedWorkspace struct {
	// ID is the workspace UUID; generated when empty.
	ID string `yaml:"id"`
	// Name is the display name.
	Name string `yaml:"name"`
	// Plan is pro, expert or free (free has no API access: every call answers 403 api_access_denied).
	Plan string `yaml:"plan"`
	// BalanceMinutes is the plan minutes available at start.
	BalanceMinutes float64 `yaml:"balance_minutes"`
	// Limits override the defaults of the reference.
	Limits SeedLimits `yaml:"limits"`
	// Members of the workspace; the first owner acts as workspace owner.
	Members []SeedMember `yaml:"members"`
	// Projects with their members.
	Projects []SeedProject `yaml:"projects"`
	// Prompts are custom report templates; the built-in catalogue always exists.
	Prompts []SeedPrompt `yaml:"prompts"`
	// Keys are API keys (mk_live_...) and OAuth tokens bound to this workspace.
	Keys []SeedKey `yaml:"keys"`
}

// SeedLimits are a workspace's limits. Zero values take the reference's defaults.
type SeedLimits struct {
	// MaxFileSizeMB is the upload size cap (default 2048).
	MaxFileSizeMB int `yaml:"max_file_size_mb"`
	// Concurrency is the number of files processed in parallel (default 2).
	Concurrency int `yaml:"concurrency"`
	// MaxDurationHours is the longest accepted recording (default 10).
	MaxDurationHours int `yaml:"max_duration_hours"`
	// ReportsPerUpload is the most slugs per upload or report request (default 3).
	ReportsPerUpload int `yaml:"reports_per_upload"`
	// ReportsPerDay is the daily report cap of the workspace (default 300).
	ReportsPerDay int `yaml:"reports_per_day"`
	// UploadsPerDay is the daily anti-abuse upload cap (default 5000; 429 upload_quota_exceeded).
	UploadsPerDay int `yaml:"uploads_per_day"`
	// MaxQueuedFiles is the most files waiting in queued (default 1000; 429 too_many_queued_files).
	MaxQueuedFiles int `yaml:"max_queued_files"`
}

// SeedMember is a workspace member.
type SeedMember struct {
	// ID is the member UUID; generated when empty.
	ID string `yaml:"id"`
	// Email is the registration e-mail (unique in the workspace).
	Email string `yaml:"email"`
	// Name is the display name.
	Name string `yaml:"name"`
	// Role is owner or user.
	Role string `yaml:"role"`
	// Active is false for members who left; nil means true.
	Active *bool `yaml:"active"`
	// Identities are external identities bound to the member.
	Identities []SeedIdentity `yaml:"identities"`
}

// SeedIdentity is an external identity.
type SeedIdentity struct {
	Provider   string `yaml:"provider"`
	ExternalID string `yaml:"external_id"`
}

// SeedProject is a project and its members.
type SeedProject struct {
	ID      string `yaml:"id"`
	Name    string `yaml:"name"`
	Members []struct {
		Email string `yaml:"email"`
		// Role is viewer, editor or owner.
		Role string `yaml:"role"`
	} `yaml:"members"`
}

// SeedPrompt is a custom report template.
type SeedPrompt struct {
	Name string `yaml:"name"`
	Slug string `yaml:"slug"`
	// Scope is workspace or personal.
	Scope string `yaml:"scope"`
	// Owner is the e-mail of the member who owns it.
	Owner string `yaml:"owner"`
	// Draft templates are never shown or accepted.
	Draft bool `yaml:"draft"`
	// Fails makes every generation of this template fail (to test report failures).
	Fails bool `yaml:"fails"`
}

// SeedKey is an API key or OAuth token.
type SeedKey struct {
	// Key is the full secret: mk_live_... for API keys; any other value is an OAuth token.
	// Empty generates a random API key, printed once at start.
	Key string `yaml:"key"`
	// Member is the e-mail of the member the key acts for.
	Member string `yaml:"member"`
	// Scopes are read, uploads:write, reports:write, transcriptions:delete, members:write.
	Scopes []string `yaml:"scopes"`
	// ExpiresAt is the optional expiry.
	ExpiresAt *time.Time `yaml:"expires_at"`
	// Revoked keys answer 401.
	Revoked bool `yaml:"revoked"`
}

// GeneratedKey is an API key the sandbox generated while seeding; its secret is shown once.
type GeneratedKey struct {
	Workspace string
	Member    string
	Key       string
}

// LoadSeed reads and validates a seed file. Unknown keys and bad values are errors naming the
// file and the field at fault.
func LoadSeed(path string) (*Seed, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read seed: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var seed Seed
	if err := dec.Decode(&seed); err != nil {
		return nil, fmt.Errorf("seed %s: %w", path, err)
	}
	if err := seed.Validate(); err != nil {
		return nil, fmt.Errorf("seed %s: %w", path, err)
	}
	return &seed, nil
}

// DemoSeed is the workspace created when no seed file is given: one Pro workspace with an owner,
// a member, and two generated keys (full rights for the owner, read-only for the member).
func DemoSeed() *Seed {
	return &Seed{Workspaces: []SeedWorkspace{{
		Name: "Demo", Plan: "pro", BalanceMinutes: 600,
		Members: []SeedMember{
			{Email: "owner@demo.test", Name: "Olivia Owner", Role: "owner"},
			{Email: "sam@demo.test", Name: "Sam Seller", Role: "user",
				Identities: []SeedIdentity{{Provider: "zoom", ExternalID: "u-1"}}},
		},
		Projects: []SeedProject{{Name: "Sales"}},
		Keys: []SeedKey{
			{Member: "owner@demo.test", Scopes: []string{scopeRead, scopeUpload, scopeReports, scopeDelete, scopeMembers}},
			{Member: "sam@demo.test", Scopes: []string{scopeRead}},
		},
	}}}
}

// LocalKey is the key of LocalSeed's workspace. It opens only a sandbox on this machine.
const LocalKey = "mk_live_local_sandbox"

// LocalSeed is the workspace of the sandbox the bridge starts in-process when no API base URL is
// configured: Acme with owner@acme.test and sam@acme.test (identity zoom:u-1), 6000 minutes, and
// LocalKey with every right.
func LocalSeed() *Seed {
	return &Seed{Workspaces: []SeedWorkspace{{
		Name: "Acme", Plan: "pro", BalanceMinutes: 6000,
		Members: []SeedMember{
			{Email: "owner@acme.test", Name: "Olivia Owner", Role: "owner"},
			{Email: "sam@acme.test", Name: "Sam Seller", Role: "user", Identities: []SeedIdentity{{Provider: "zoom", ExternalID: "u-1"}}},
		},
		Projects: []SeedProject{{Name: "Sales", Members: []struct {
			Email string `yaml:"email"`
			Role  string `yaml:"role"`
		}{{Email: "sam@acme.test", Role: "editor"}}}},
		Keys: []SeedKey{{Key: LocalKey, Member: "owner@acme.test", Scopes: []string{scopeRead, scopeUpload, scopeReports, scopeDelete, scopeMembers}}},
	}}}
}
