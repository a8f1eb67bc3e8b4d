package mapping

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/connectors"
)

// Action kinds of an identity plan.
const (
	ActBound     = "bound"     // already bound to a member: nothing to do
	ActBind      = "bind"      // PUT the identity on the member
	ActUnmatched = "unmatched" // no member found: the job holds until someone decides
	ActInvalid   = "invalid"   // the external id breaks the identity rules: no call
	ActMissing   = "missing"   // the map names someone who is not a member (left, or a typo)
	ActPrune     = "prune"     // bound, but the map no longer lists it: DELETE (with --prune)
)

// Action is one line of an identity plan.
type Action struct {
	Kind       string
	Identity   api.Identity
	Email      string // the external user's e-mail, when known
	MemberID   string
	MemberMail string
	Why        string // how the member was found, or what is wrong
}

// IdentityAPI is what the sync needs of the service.
type IdentityAPI interface {
	Members(ctx context.Context) ([]api.Member, error)
	PutIdentity(ctx context.Context, userID string, id api.Identity) (bool, error)
	DeleteIdentity(ctx context.Context, userID, provider, externalID string) error
}

// Plan decides, for each external user of the source (owners) and each entry of the map, which
// member it should be bound to under the rules' provider (default: the source's type): by the
// map first, then by e-mail. With prune, bindings of provider that the map no longer has are
// planned for removal (only with a map). It fails when the member list cannot be read.
func (m *Mapper) Plan(ctx context.Context, dir IdentityAPI, owners []connectors.Owner, prune bool) ([]Action, error) {
	provider := m.provider
	if provider == "" {
		provider = strings.ToLower(m.typ)
	}
	members, err := dir.Members(ctx)
	if err != nil {
		return nil, fmt.Errorf("members: %w", err)
	}
	byEmail, byID, boundTo := map[string]api.Member{}, map[string]api.Member{}, map[string]api.Member{}
	for _, mem := range members {
		byEmail[strings.ToLower(mem.Email)], byID[mem.ID] = mem, mem
		for _, id := range mem.Identities {
			if id.Provider == provider {
				boundTo[id.ExternalID] = mem
			}
		}
	}
	table := m.tab()
	users := planUsers(owners, table)
	var out []Action
	for _, o := range users {
		a := Action{Identity: api.Identity{Provider: provider, ExternalID: o.ID}, Email: o.Email}
		if err := api.ValidateIdentity(a.Identity); err != nil {
			a.Kind, a.Why = ActInvalid, err.Error()
			out = append(out, a)
			continue
		}
		if mem, ok := boundTo[o.ID]; ok {
			a.Kind, a.MemberID, a.MemberMail, a.Why = ActBound, mem.ID, mem.Email, "already bound"
			out = append(out, a)
			continue
		}
		author, via := table[o.ID], "map"
		if author == "" && o.Email != "" {
			author = table[strings.ToLower(o.Email)]
		}
		if author == "" && o.Email != "" {
			if mem, ok := byEmail[strings.ToLower(o.Email)]; ok {
				author, via = "email:"+mem.Email, "e-mail"
			}
		}
		if author == "" {
			a.Kind, a.Why = ActUnmatched, "no map entry, no member with this e-mail"
			out = append(out, a)
			continue
		}
		kind, val, _ := strings.Cut(author, ":")
		var mem api.Member
		var ok bool
		if kind == "email" {
			mem, ok = byEmail[strings.ToLower(val)]
		} else {
			mem, ok = byID[val]
		}
		if !ok {
			a.Kind, a.Why = ActMissing, fmt.Sprintf("the %s names %s, who is not an active member (left?)", via, author)
			out = append(out, a)
			continue
		}
		a.Kind, a.MemberID, a.MemberMail, a.Why = ActBind, mem.ID, mem.Email, "by "+via
		out = append(out, a)
	}
	if prune {
		if len(table) == 0 {
			return nil, errors.New("--prune needs mapping.map_file or mapping.map: it removes the bindings the map no longer has")
		}
		out = append(out, pruneActions(provider, boundTo, table)...)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Identity.ExternalID < out[j].Identity.ExternalID
	})
	return out, nil
}

// planUsers are the external users a plan decides about, by id: the owners the source gave,
// and the map's entries that name an id (not an e-mail).
func planUsers(owners []connectors.Owner, table map[string]string) map[string]connectors.Owner {
	users := map[string]connectors.Owner{}
	for _, o := range owners {
		if o.ID != "" {
			users[o.ID] = o
		}
	}
	for k := range table {
		if _, ok := users[k]; !ok && !strings.Contains(k, "@") {
			users[k] = connectors.Owner{ID: k}
		}
	}
	return users
}

// pruneActions plans the removal of the bindings of provider (external id → member) that the
// map's table no longer has.
func pruneActions(provider string, boundTo map[string]api.Member, table map[string]string) []Action {
	var out []Action
	for ext, mem := range boundTo {
		if _, ok := table[ext]; !ok {
			out = append(out, Action{Kind: ActPrune, Identity: api.Identity{Provider: provider, ExternalID: ext},
				MemberID: mem.ID, MemberMail: mem.Email, Why: "bound, but not in the map"})
		}
	}
	return out
}

// Result is what applying one action did.
type Result struct {
	Action
	Outcome string // created, unchanged, conflict, removed, or the error
}

// Apply performs the plan's bind and prune actions; a conflict (the identity is bound to
// someone else) is reported, never overwritten. It returns every action's outcome and the
// first error that was not a conflict.
func Apply(ctx context.Context, dir IdentityAPI, plan []Action) ([]Result, error) {
	var out []Result
	var first error
	for _, a := range plan {
		r := Result{Action: a}
		switch a.Kind {
		case ActBind:
			created, err := dir.PutIdentity(ctx, a.MemberID, a.Identity)
			switch {
			case api.IsCode(err, "identity_conflict"):
				r.Outcome = "conflict: bound to another member; left as is"
			case err != nil:
				r.Outcome = "error: " + err.Error()
				first = cmp(first, err)
			case created:
				r.Outcome = "created"
			default:
				r.Outcome = "unchanged"
			}
		case ActPrune:
			err := dir.DeleteIdentity(ctx, a.MemberID, a.Identity.Provider, a.Identity.ExternalID)
			switch {
			case api.IsCode(err, "identity_not_found"):
				r.Outcome = "already gone"
			case err != nil:
				r.Outcome = "error: " + err.Error()
				first = cmp(first, err)
			default:
				r.Outcome = "removed"
			}
		default:
			continue
		}
		out = append(out, r)
	}
	return out, first
}

// Outcomes counts results by the first word of their outcome (created, unchanged, conflict,
// removed, already gone, error).
func Outcomes(res []Result) map[string]int {
	counts := map[string]int{}
	for _, r := range res {
		counts[strings.SplitN(r.Outcome, ":", 2)[0]]++
	}
	return counts
}

func cmp(first, err error) error {
	if first != nil {
		return first
	}
	return err
}
