package bridge

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/mapping"
)

// IdentityPlanner plans the bindings of a source's external users to members;
// *mapping.Mapper implements it.
type IdentityPlanner interface {
	Plan(ctx context.Context, dir mapping.IdentityAPI, owners []connectors.Owner, prune bool) ([]mapping.Action, error)
}

// PlanIdentities gathers the external users of source (the owners of what src lists now and of
// the source's held jobs in s) and plans their bindings with m against the members dir lists
// (bridge identities plan and apply, mapping.sync). With prune, bindings the map no longer has
// are planned for removal.
func PlanIdentities(ctx context.Context, s JobStore, source string, src connectors.Source, m IdentityPlanner,
	dir mapping.IdentityAPI, prune bool) ([]mapping.Action, error) {
	recs, _, err := src.List(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", source, err)
	}
	var owners []connectors.Owner
	for _, r := range recs {
		if r.Owner != nil {
			owners = append(owners, *r.Owner)
		}
	}
	held, err := s.Jobs(ctx, JobFilter{States: []State{StateHeld}, Source: source})
	if err != nil {
		return nil, err
	}
	for _, j := range held {
		if j.Owner != nil {
			owners = append(owners, *j.Owner)
		}
	}
	return m.Plan(ctx, dir, owners, prune)
}

// SyncIdentities is identities apply on a schedule (mapping.sync), logged: it plans the
// source's bindings with its own mapping (PlanIdentities), applies them (mapping.Apply) and logs
// the outcomes, at WARN when someone should look (conflicts, invalid ids, members who left), at
// ERROR when it failed. When it created a binding, it notes the mapping change in the store, so
// every process on it maps its held jobs again, and makes the source's unmapped held jobs due
// now (RemapHeld).
func (p *Pipeline) SyncIdentities(ctx context.Context, source string, dir mapping.IdentityAPI) {
	sc := p.Sources[source]
	if sc == nil {
		p.log().Error("identity sync", "source", source, "error", "unknown source")
		return
	}
	planner, ok := sc.Mapper.(IdentityPlanner)
	if !ok {
		p.log().Error("identity sync", "source", source, "error", "the source's mapping cannot plan bindings")
		return
	}
	plan, err := PlanIdentities(ctx, p.Store, source, sc.Source, planner, dir, false)
	if err != nil {
		p.log().Error("identity sync", "source", source, "error", err)
		return
	}
	res, err := mapping.Apply(ctx, dir, plan)
	counts := mapping.Outcomes(res)
	for _, a := range plan {
		if a.Kind == mapping.ActUnmatched || a.Kind == mapping.ActMissing || a.Kind == mapping.ActInvalid {
			counts[a.Kind]++
		}
	}
	level := slog.LevelInfo
	for outcome := range counts {
		if outcome != "created" && outcome != "unchanged" && outcome != mapping.ActUnmatched {
			level = slog.LevelWarn // conflicts, invalid ids, members who left: someone should look
		}
	}
	if err != nil {
		level = slog.LevelError
	}
	p.log().Log(ctx, level, "identity sync", "source", source, "outcomes", counts, "error", err)
	if counts["created"] > 0 {
		// Other processes on this store (and this one's other sources) hear of it too.
		if _, err := p.Store.NoteMappingChange(ctx, fmt.Sprintf("mapping.sync --source %s: %d created", source, counts["created"]), p.now()); err != nil {
			p.log().Error("identity sync: note the mapping change", "source", source, "error", err)
		}
		if err := p.RemapHeld(ctx, source); err != nil {
			p.log().Error("identity sync: remap held jobs", "source", source, "error", err)
		}
	}
}
