package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"

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

var knownScopes = map[string]bool{
	scopeRead: true, scopeUpload: true, scopeReports: true, scopeDelete: true, scopeMembers: true,
}

var slugRe = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

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

// Validate checks the seed and fills defaults; the error names the workspace and field.
func (s *Seed) Validate() error {
	if len(s.Workspaces) == 0 {
		return errors.New("workspaces: at least one workspace is needed")
	}
	for i := range s.Workspaces {
		w := &s.Workspaces[i]
		at := fmt.Sprintf("workspaces[%d]", i)
		if w.Name == "" {
			return fmt.Errorf("%s.name: required", at)
		}
		switch w.Plan {
		case "":
			w.Plan = "pro"
		case "pro", "expert", "free":
		default:
			return fmt.Errorf("%s.plan: %q is not pro, expert or free", at, w.Plan)
		}
		if w.ID != "" && !isUUID(w.ID) {
			return fmt.Errorf("%s.id: %q is not a UUID", at, w.ID)
		}
		if w.BalanceMinutes < 0 {
			return fmt.Errorf("%s.balance_minutes: must not be negative", at)
		}
		l := &w.Limits
		for _, d := range []struct {
			v   *int
			def int
			key string
		}{
			{&l.MaxFileSizeMB, 2048, "max_file_size_mb"}, {&l.Concurrency, 2, "concurrency"},
			{&l.MaxDurationHours, 10, "max_duration_hours"}, {&l.ReportsPerUpload, 3, "reports_per_upload"},
			{&l.ReportsPerDay, 300, "reports_per_day"}, {&l.UploadsPerDay, 5000, "uploads_per_day"},
			{&l.MaxQueuedFiles, 1000, "max_queued_files"},
		} {
			if *d.v < 0 {
				return fmt.Errorf("%s.limits.%s: must not be negative", at, d.key)
			}
			if *d.v == 0 {
				*d.v = d.def
			}
		}
		emails := map[string]bool{}
		for j, m := range w.Members {
			mat := fmt.Sprintf("%s.members[%d]", at, j)
			if !strings.Contains(m.Email, "@") {
				return fmt.Errorf("%s.email: %q is not an e-mail address", mat, m.Email)
			}
			if emails[strings.ToLower(m.Email)] {
				return fmt.Errorf("%s.email: %q appears twice", mat, m.Email)
			}
			emails[strings.ToLower(m.Email)] = true
			if m.Role != "owner" && m.Role != "user" {
				return fmt.Errorf("%s.role: %q is not owner or user", mat, m.Role)
			}
			if m.ID != "" && !isUUID(m.ID) {
				return fmt.Errorf("%s.id: %q is not a UUID", mat, m.ID)
			}
			for k, id := range m.Identities {
				if code := validateIdentity(id.Provider, id.ExternalID); code != "" {
					return fmt.Errorf("%s.identities[%d]: %s", mat, k, code)
				}
			}
		}
		member := func(field, email string) error {
			if !emails[strings.ToLower(email)] {
				return fmt.Errorf("%s: %q is not a member of the workspace", field, email)
			}
			return nil
		}
		for j, p := range w.Projects {
			if p.Name == "" {
				return fmt.Errorf("%s.projects[%d].name: required", at, j)
			}
			for k, pm := range p.Members {
				if err := member(fmt.Sprintf("%s.projects[%d].members[%d].email", at, j, k), pm.Email); err != nil {
					return err
				}
				if pm.Role != "viewer" && pm.Role != "editor" && pm.Role != "owner" {
					return fmt.Errorf("%s.projects[%d].members[%d].role: %q is not viewer, editor or owner", at, j, k, pm.Role)
				}
			}
		}
		for j, p := range w.Prompts {
			pat := fmt.Sprintf("%s.prompts[%d]", at, j)
			if !slugRe.MatchString(p.Slug) {
				return fmt.Errorf("%s.slug: %q is not a slug (a-z, 0-9, hyphen)", pat, p.Slug)
			}
			if _, builtin := builtinByslug[p.Slug]; builtin {
				return fmt.Errorf("%s.slug: %q is a built-in slug", pat, p.Slug)
			}
			if p.Scope != "workspace" && p.Scope != "personal" {
				return fmt.Errorf("%s.scope: %q is not workspace or personal", pat, p.Scope)
			}
			if err := member(pat+".owner", p.Owner); err != nil {
				return err
			}
		}
		for j, k := range w.Keys {
			kat := fmt.Sprintf("%s.keys[%d]", at, j)
			if err := member(kat+".member", k.Member); err != nil {
				return err
			}
			for _, sc := range k.Scopes {
				if !knownScopes[sc] {
					return fmt.Errorf("%s.scopes: unknown scope %q", kat, sc)
				}
			}
		}
	}
	return nil
}

// apply writes the seed into an empty database and returns the keys it generated.
func (s *Seed) apply(ctx context.Context, tx *sql.Tx, now time.Time) ([]GeneratedKey, error) {
	var generated []GeneratedKey
	for _, w := range s.Workspaces {
		wsID := orNewID(w.ID)
		l := w.Limits
		if _, err := tx.ExecContext(ctx, `INSERT INTO workspaces (id, name, plan, balance_minutes, max_file_size_mb,
			concurrency, max_duration_hours, reports_per_upload, reports_per_day, uploads_per_day, max_queued_files)
			VALUES (?,?,?,?,?,?,?,?,?,?,?)`, wsID, w.Name, w.Plan, w.BalanceMinutes, l.MaxFileSizeMB, l.Concurrency,
			l.MaxDurationHours, l.ReportsPerUpload, l.ReportsPerDay, l.UploadsPerDay, l.MaxQueuedFiles); err != nil {
			return nil, fmt.Errorf("seed workspace %s: %w", w.Name, err)
		}
		ids := map[string]string{}
		for i, m := range w.Members {
			id := orNewID(m.ID)
			ids[strings.ToLower(m.Email)] = id
			active := m.Active == nil || *m.Active
			if _, err := tx.ExecContext(ctx, `INSERT INTO members (id, workspace_id, email, name, role, active, seq)
				VALUES (?,?,?,?,?,?,?)`, id, wsID, m.Email, nullString(m.Name), m.Role, active, i); err != nil {
				return nil, fmt.Errorf("seed member %s: %w", m.Email, err)
			}
			for _, ident := range m.Identities {
				if _, err := tx.ExecContext(ctx, `INSERT INTO identities (workspace_id, member_id, provider, external_id, created_at)
					VALUES (?,?,?,?,?)`, wsID, id, strings.ToLower(ident.Provider), ident.ExternalID, now.UnixNano()); err != nil {
					return nil, fmt.Errorf("seed identity %s:%s: %w", ident.Provider, ident.ExternalID, err)
				}
			}
		}
		for i, p := range w.Projects {
			id := orNewID(p.ID)
			// Later projects are newer, so the list (newest first) shows them in reverse seed order.
			created := now.Add(time.Duration(i-len(w.Projects)) * time.Minute)
			if _, err := tx.ExecContext(ctx, `INSERT INTO projects (id, workspace_id, name, created_at) VALUES (?,?,?,?)`,
				id, wsID, p.Name, created.UnixNano()); err != nil {
				return nil, fmt.Errorf("seed project %s: %w", p.Name, err)
			}
			for _, pm := range p.Members {
				if _, err := tx.ExecContext(ctx, `INSERT INTO project_members (project_id, member_id, role) VALUES (?,?,?)`,
					id, ids[strings.ToLower(pm.Email)], pm.Role); err != nil {
					return nil, fmt.Errorf("seed project member %s: %w", pm.Email, err)
				}
			}
		}
		for _, p := range w.Prompts {
			if _, err := tx.ExecContext(ctx, `INSERT INTO prompts (workspace_id, slug, name, scope, owner_id, draft, fails)
				VALUES (?,?,?,?,?,?,?)`, wsID, p.Slug, p.Name, p.Scope, ids[strings.ToLower(p.Owner)], p.Draft, p.Fails); err != nil {
				return nil, fmt.Errorf("seed prompt %s: %w", p.Slug, err)
			}
		}
		for _, k := range w.Keys {
			secret := k.Key
			if secret == "" {
				secret = generateKey()
				generated = append(generated, GeneratedKey{Workspace: w.Name, Member: k.Member, Key: secret})
			}
			kind := "api_key"
			if !strings.HasPrefix(secret, keyPrefix) {
				kind = "oauth"
			}
			var exp any
			if k.ExpiresAt != nil {
				exp = k.ExpiresAt.UnixNano()
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO api_keys (hash, last4, kind, workspace_id, member_id, scopes, expires_at, revoked)
				VALUES (?,?,?,?,?,?,?,?)`, hashKey(secret), last4(secret), kind, wsID, ids[strings.ToLower(k.Member)],
				strings.Join(k.Scopes, " "), exp, k.Revoked); err != nil {
				return nil, fmt.Errorf("seed key for %s: %w", k.Member, err)
			}
		}
	}
	return generated, nil
}

func generateKey() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return keyPrefix + hex.EncodeToString(b)
}

func orNewID(id string) string {
	if id == "" {
		return uuid.NewString()
	}
	return strings.ToLower(id)
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
