package mapping

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
)

// Owner rules: how a recording's external owner (a Zoom host, a Drive owner) becomes X-Author.
const (
	// RuleIdentity sends external:<provider>:<id> when a member holds that identity.
	RuleIdentity = "identity"
	// RuleEmail sends email:<address> when a member has the owner's e-mail (case-insensitive).
	RuleEmail = "email"
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
		return nil, fmt.Errorf("members: %w: %w", bridge.ErrNotReady, err)
	}
	m.all, m.at = all, time.Now()
	return all, nil
}

// resolveOwner applies the owner rules to o: the X-Author, or "" with ok false when no rule
// matched.
func (m *Mapper) resolveOwner(ctx context.Context, o *bridge.Owner) (string, bool, error) {
	if o == nil || m.members == nil {
		return "", false, nil
	}
	all, err := m.members.List(ctx)
	if err != nil {
		return "", false, err
	}
	provider := m.provider
	if provider == "" {
		provider = o.Provider
	}
	for _, rule := range m.rules {
		for _, mem := range all {
			switch rule {
			case RuleIdentity:
				for _, id := range mem.Identities {
					if id.Provider == strings.ToLower(provider) && id.ExternalID == o.ID && o.ID != "" {
						return "external:" + id.Provider + ":" + id.ExternalID, true, nil
					}
				}
			case RuleEmail:
				if o.Email != "" && strings.EqualFold(mem.Email, o.Email) {
					return "email:" + mem.Email, true, nil
				}
			}
		}
	}
	return "", false, nil
}
