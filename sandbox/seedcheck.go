package sandbox

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

var knownScopes = map[string]bool{
	scopeRead: true, scopeUpload: true, scopeReports: true, scopeDelete: true, scopeMembers: true,
}

var slugRe = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

// Validate checks the seed and fills defaults; the error names the workspace and field.
func (s *Seed) Validate() error {
	if len(s.Workspaces) == 0 {
		return errors.New("workspaces: at least one workspace is needed")
	}
	for i := range s.Workspaces {
		if err := s.Workspaces[i].validate(fmt.Sprintf("workspaces[%d]", i)); err != nil {
			return err
		}
	}
	return nil
}

// validate checks the workspace found at at ("workspaces[0]") and fills its defaults, in
// order: name, plan, id, balance, limits, members, projects, prompts, keys.
func (w *SeedWorkspace) validate(at string) error {
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
	if err := w.Limits.validate(at); err != nil {
		return err
	}
	emails, err := validateMembers(at, w.Members)
	if err != nil {
		return err
	}
	if err := validateProjects(at, w.Projects, emails); err != nil {
		return err
	}
	if err := validatePrompts(at, w.Prompts, emails); err != nil {
		return err
	}
	return validateKeys(at, w.Keys, emails)
}

// validate refuses negative limits of the workspace at at and gives the zero ones the
// reference's defaults.
func (l *SeedLimits) validate(at string) error {
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
	return nil
}

// seedEmails are the e-mail addresses of a workspace's members, in lower case.
type seedEmails map[string]bool

// member checks that email (any case) is a member's; the error names field.
func (e seedEmails) member(field, email string) error {
	if !e[strings.ToLower(email)] {
		return fmt.Errorf("%s: %q is not a member of the workspace", field, email)
	}
	return nil
}

// validateMembers checks the members of the workspace at at and returns their e-mail
// addresses.
func validateMembers(at string, members []SeedMember) (seedEmails, error) {
	emails := seedEmails{}
	for j, m := range members {
		mat := fmt.Sprintf("%s.members[%d]", at, j)
		if !strings.Contains(m.Email, "@") {
			return nil, fmt.Errorf("%s.email: %q is not an e-mail address", mat, m.Email)
		}
		if emails[strings.ToLower(m.Email)] {
			return nil, fmt.Errorf("%s.email: %q appears twice", mat, m.Email)
		}
		emails[strings.ToLower(m.Email)] = true
		if m.Role != "owner" && m.Role != "user" {
			return nil, fmt.Errorf("%s.role: %q is not owner or user", mat, m.Role)
		}
		if m.ID != "" && !isUUID(m.ID) {
			return nil, fmt.Errorf("%s.id: %q is not a UUID", mat, m.ID)
		}
		for k, id := range m.Identities {
			if code := validateIdentity(id.Provider, id.ExternalID); code != "" {
				return nil, fmt.Errorf("%s.identities[%d]: %s", mat, k, code)
			}
		}
	}
	return emails, nil
}

// validateProjects checks the projects of the workspace at at: a name, and members of the
// workspace with a project role.
func validateProjects(at string, projects []SeedProject, emails seedEmails) error {
	for j, p := range projects {
		if p.Name == "" {
			return fmt.Errorf("%s.projects[%d].name: required", at, j)
		}
		for k, pm := range p.Members {
			if err := emails.member(fmt.Sprintf("%s.projects[%d].members[%d].email", at, j, k), pm.Email); err != nil {
				return err
			}
			if pm.Role != "viewer" && pm.Role != "editor" && pm.Role != "owner" {
				return fmt.Errorf("%s.projects[%d].members[%d].role: %q is not viewer, editor or owner", at, j, k, pm.Role)
			}
		}
	}
	return nil
}

// validatePrompts checks the custom templates of the workspace at at: a slug that is not a
// built-in one, a scope, an owner who is a member.
func validatePrompts(at string, prompts []SeedPrompt, emails seedEmails) error {
	for j, p := range prompts {
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
		if err := emails.member(pat+".owner", p.Owner); err != nil {
			return err
		}
	}
	return nil
}

// validateKeys checks the keys of the workspace at at: a member to act for, known scopes.
func validateKeys(at string, keys []SeedKey, emails seedEmails) error {
	for j, k := range keys {
		kat := fmt.Sprintf("%s.keys[%d]", at, j)
		if err := emails.member(kat+".member", k.Member); err != nil {
			return err
		}
		for _, sc := range k.Scopes {
			if !knownScopes[sc] {
				return fmt.Errorf("%s.scopes: unknown scope %q", kat, sc)
			}
		}
	}
	return nil
}
