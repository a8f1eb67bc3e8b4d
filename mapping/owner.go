package mapping

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/connectors"
)

// Owner rules: how a recording's external owner (a Zoom host, a Drive owner) becomes X-Author.
const (
	// RuleIdentity sends external:<provider>:<id> when a member holds that identity.
	RuleIdentity = "identity"
	// RuleEmail sends email:<address> when a member has the owner's e-mail (case-insensitive).
	RuleEmail = "email"
	// RuleMap looks the owner's id or e-mail up in the static table or CSV file.
	RuleMap = "map"
	// RuleStatic sends the one configured author.
	RuleStatic = "static"
	// OtherwiseHold parks the job as held, with the reason and a recording.held event, until a
	// binding or the map makes a rule match (or bridge jobs release).
	OtherwiseHold = "hold"
	// OtherwiseKeyOwner uploads without X-Author (the key's creator owns it).
	OtherwiseKeyOwner = "key_owner"
	// OtherwiseSkip skips the recording, with the reason.
	OtherwiseSkip = "skip"
)

// Directory lists the workspace's members with their identities (GET /workspace/members).
type Directory interface {
	Members(ctx context.Context) ([]api.Member, error)
}

// Members caches a Directory for a while, so mapping costs no request per job.
type Members struct {
	Dir Directory
	// TTL is how long a listing is used (default 5 min).
	TTL time.Duration

	mu  sync.Mutex
	at  time.Time
	all []api.Member
}

// List returns the members, from the cache when fresh. It fails as the Directory does.
func (m *Members) List(ctx context.Context) ([]api.Member, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ttl := m.TTL
	if ttl == 0 {
		ttl = 5 * time.Minute
	}
	if m.all != nil && time.Since(m.at) < ttl {
		return m.all, nil
	}
	all, err := m.Dir.Members(ctx)
	if err != nil {
		return nil, fmt.Errorf("members: %w: %w", ErrNotReady, err)
	}
	m.all, m.at = all, time.Now()
	return all, nil
}

// resolveOwner applies the owner rules to o: the X-Author, or "" with ok false when no rule
// matched.
func (m *Mapper) resolveOwner(ctx context.Context, o *connectors.Owner) (string, bool, error) {
	var all []api.Member
	if o != nil && m.members != nil && (slices.Contains(m.rules, RuleIdentity) || slices.Contains(m.rules, RuleEmail)) {
		var err error
		if all, err = m.members.List(ctx); err != nil {
			return "", false, err
		}
	}
	for _, rule := range m.rules {
		switch {
		case rule == RuleStatic:
			return m.author, true, nil
		case rule == RuleMap && o != nil:
			for _, k := range []string{o.ID, strings.ToLower(o.Email)} {
				if a, ok := m.tab()[k]; ok && k != "" {
					return a, true, nil
				}
			}
		case o == nil:
			continue
		}
		if a, ok := matchMember(all, rule, m.provider, o); ok {
			return a, true, nil
		}
	}
	return "", false, nil
}

// matchMember applies the identity or email rule to the member list.
func matchMember(all []api.Member, rule, provider string, o *connectors.Owner) (string, bool) {
	if o == nil {
		return "", false
	}
	if provider == "" {
		provider = strings.ToLower(o.Provider)
	}
	for _, mem := range all {
		switch rule {
		case RuleIdentity:
			for _, id := range mem.Identities {
				if id.Provider == provider && id.ExternalID == o.ID && o.ID != "" {
					return "external:" + id.Provider + ":" + id.ExternalID, true
				}
			}
		case RuleEmail:
			if o.Email != "" && strings.EqualFold(mem.Email, o.Email) {
				return "email:" + mem.Email, true
			}
		}
	}
	return "", false
}

// Refresh drops the cached member list, so the next mapping reads it again (after the service
// answered author_not_member).
func (m *Mapper) Refresh() {
	if m.members != nil {
		m.members.Invalidate()
	}
}

// Invalidate drops the cached list.
func (m *Members) Invalidate() {
	m.mu.Lock()
	m.all = nil
	m.mu.Unlock()
}

// MemberAuthor is author (email:…, user:… or external:<provider>:<id>) in the e-mail form of
// the member of members it names, so that two forms of one member compare equal; an author
// naming no member is returned as it is.
func MemberAuthor(members []api.Member, author string) string {
	kind, val, _ := strings.Cut(author, ":")
	for _, mem := range members {
		switch {
		case kind == "email" && strings.EqualFold(val, mem.Email), kind == "user" && val == mem.ID:
			return "email:" + mem.Email
		case kind == "external":
			for _, id := range mem.Identities {
				if "external:"+id.Provider+":"+id.ExternalID == author {
					return "email:" + mem.Email
				}
			}
		}
	}
	return author
}

// AuthorFor applies the owner rules to o, in the form PATCH /transcriptions/{id} takes: an
// external identity is replaced by its member's e-mail. ok is false when no rule matches.
func (m *Mapper) AuthorFor(ctx context.Context, o *connectors.Owner) (string, bool, error) {
	author, ok, err := m.resolveOwner(ctx, o)
	if err != nil || !ok || !strings.HasPrefix(author, "external:") {
		return author, ok, err
	}
	all, err := m.members.List(ctx)
	if err != nil {
		return "", false, err
	}
	provider, id, _ := strings.Cut(strings.TrimPrefix(author, "external:"), ":")
	for _, mem := range all {
		for _, x := range mem.Identities {
			if x.Provider == provider && x.ExternalID == id {
				return "email:" + mem.Email, true, nil
			}
		}
	}
	return "", false, nil
}
