package relay

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/transcript-bridge/bridge/api"
)

// memo remembers values by event for a while (ttl), at most max of them (the oldest go first).
// What expired is dropped as new values come in, so it holds about ttl's worth of events, not
// max whatever the rate (at one event every 2 s, 1,000 records took half an hour to fill).
type memo[V any] struct {
	mu    sync.Mutex
	ttl   time.Duration
	max   int
	items map[int64]memoItem[V]
	order []int64 // insertion order, for eviction beyond max
}

type memoItem[V any] struct {
	v  V
	at time.Time
}

func newMemo[V any](ttl time.Duration, maxItems int) *memo[V] {
	return &memo[V]{ttl: ttl, max: maxItems, items: map[int64]memoItem[V]{}}
}

// get returns the value kept for event, if kept within the TTL of now.
func (m *memo[V]) get(event int64, now time.Time) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[event]
	if !ok || now.Sub(it.at) >= m.ttl {
		var zero V
		return zero, false
	}
	return it.v, true
}

// put keeps v for event from now.
func (m *memo[V]) put(event int64, v V, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.items[event]; !ok {
		m.order = append(m.order, event)
	}
	m.items[event] = memoItem[V]{v: v, at: now}
	for len(m.order) > m.max || len(m.order) > 0 && now.Sub(m.items[m.order[0]].at) >= m.ttl {
		delete(m.items, m.order[0])
		m.order = m.order[1:]
	}
}

// records remembers the transcription record fetched for an event for a few minutes, so the
// event's deliveries to several endpoints and their quick retries cost one GET out of the
// key's 500 a minute. The key is the event: a later event of the same transcription fetches
// afresh.
type records struct{ m *memo[*api.Transcription] }

func newRecords(ttl time.Duration, maxItems int) *records {
	return &records{m: newMemo[*api.Transcription](ttl, maxItems)}
}

// get returns the record of transcription id for event, from the cache when fetched within
// the TTL; nil when the transcription no longer exists. It fails as the API call does.
func (c *records) get(ctx context.Context, a API, event int64, id string, now time.Time) (*api.Transcription, error) {
	if t, ok := c.m.get(event, now); ok {
		return t, nil
	}
	t, err := a.Get(ctx, id)
	if errors.Is(err, api.ErrNotFound) {
		t, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	c.m.put(event, t, now)
	return t, nil
}
