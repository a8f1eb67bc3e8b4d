package relay

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/transcript-bridge/bridge/api"
)

// records remembers the transcription record fetched for an event for a few minutes, so the
// event's deliveries to several endpoints and their quick retries cost one GET out of the
// key's 500 a minute. The key is the event: a later event of the same transcription fetches
// afresh.
type records struct {
	mu    sync.Mutex
	ttl   time.Duration
	max   int
	items map[int64]record
	order []int64 // insertion order, for eviction beyond max
}

type record struct {
	t  *api.Transcription // nil: deleted upstream
	at time.Time
}

func newRecords(ttl time.Duration, maxItems int) *records {
	return &records{ttl: ttl, max: maxItems, items: map[int64]record{}}
}

// get returns the record of transcription id for event, from the cache when fetched within
// the TTL; nil when the transcription no longer exists. It fails as the API call does.
func (c *records) get(ctx context.Context, a API, event int64, id string, now time.Time) (*api.Transcription, error) {
	c.mu.Lock()
	rec, ok := c.items[event]
	c.mu.Unlock()
	if ok && now.Sub(rec.at) < c.ttl {
		return rec.t, nil
	}
	t, err := a.Get(ctx, id)
	if errors.Is(err, api.ErrNotFound) {
		t, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[event]; !ok {
		c.order = append(c.order, event)
	}
	c.items[event] = record{t: t, at: now}
	for len(c.order) > c.max {
		delete(c.items, c.order[0])
		c.order = c.order[1:]
	}
	return t, nil
}
