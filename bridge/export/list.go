package export

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
)

// List returns the completed transcriptions of c created in w, oldest first, pages of 100.
func (e *Exporter) List(ctx context.Context, c *Config, w Window) ([]api.ListItem, error) {
	p := api.ListParams{Status: "completed", DateFrom: w.From.UTC(), DateTo: w.Until.UTC(), ProjectID: c.Filter.ProjectID,
		Language: c.Filter.Language, Sort: "created_at", Limit: 100}
	for k, v := range c.Filter.Metadata { // the service filters on one key; the rest here
		p.MetadataKey, p.MetadataValue = k, v
		break
	}
	var out []api.ListItem
	for it, err := range e.API.All(ctx, p) {
		if err != nil {
			return nil, fmt.Errorf("list: %w", err)
		}
		if it.CreatedAt.Before(w.From) || !it.CreatedAt.Before(w.Until) || !metaMatches(it.Metadata, c.Filter.Metadata) {
			continue
		}
		if c.Filter.Source != "" {
			src, err := e.Store.SourceOf(ctx, it.ID)
			if err != nil {
				return nil, err
			}
			if src != c.Filter.Source {
				continue
			}
		}
		out = append(out, it)
	}
	ids := make([]string, len(out))
	for i, it := range out {
		ids[i] = it.ID
	}
	done, err := e.Store.Exported(ctx, c.Name, ids)
	if err != nil {
		return nil, err
	}
	fresh := out[:0]
	for _, it := range out {
		if done[it.ID] { // written by an earlier run whose window overlapped this one
			continue
		}
		if gone, err := e.forgotten(ctx, it.ID); err != nil {
			return nil, err
		} else if !gone {
			fresh = append(fresh, it)
		}
	}
	return fresh, nil
}

// forgotten reports whether a tombstone names transcription id (bridge forget): an export
// leaves it out even when it is still listed upstream (its deletion there failed).
func (e *Exporter) forgotten(ctx context.Context, id string) (bool, error) {
	ps, ok := e.Store.(bridge.PrivacyStore)
	if !ok {
		return false, nil
	}
	gone, err := ps.Tombstoned(ctx, bridge.TombstoneQuery{TranscriptionID: id})
	if err != nil {
		return false, fmt.Errorf("tombstone of %s: %w", id, err)
	}
	return gone, nil
}

// Settled returns how far the checkpoint may move after a run of w: until, or the creation time
// of the oldest transcription of the window still queued or processing, so one that completes
// later is taken by a later run (the ids written are remembered: none is written twice).
func (e *Exporter) Settled(ctx context.Context, c *Config, w Window) (time.Time, error) {
	settled := w.Until
	for _, status := range []string{"queued", "processing"} {
		p := api.ListParams{Status: status, DateFrom: w.From.UTC(), DateTo: w.Until.UTC(), ProjectID: c.Filter.ProjectID,
			Language: c.Filter.Language, Sort: "created_at", Limit: 1}
		for it, err := range e.API.All(ctx, p) {
			if err != nil {
				return time.Time{}, fmt.Errorf("list %s: %w", status, err)
			}
			if !it.CreatedAt.Before(w.From) && it.CreatedAt.Before(settled) {
				settled = it.CreatedAt
			}
			break // sorted by creation: the first is the oldest
		}
	}
	return settled, nil
}

func metaMatches(raw json.RawMessage, want map[string]string) bool {
	if len(want) == 0 {
		return true
	}
	var m map[string]any
	json.Unmarshal(raw, &m)
	for k, v := range want {
		if fmt.Sprint(m[k]) != v {
			return false
		}
	}
	return true
}
