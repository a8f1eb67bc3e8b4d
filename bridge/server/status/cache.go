package status

import (
	"context"
	"sync"
	"time"
)

// fetchTimeout bounds one fetch of a cached value.
const fetchTimeout = 10 * time.Second

// cached is a value fetched at most once per every, however many requests want it: a failure
// is kept as long as a value, so an API that is down is not asked again on every page load
// either. Requests that want it while it is fetched wait for that fetch.
type cached[T any] struct {
	every time.Duration
	fetch func(ctx context.Context) (T, error)

	mu  sync.Mutex
	at  time.Time // when the kept answer was fetched (zero: never)
	val T
	err error
}

func newCached[T any](every time.Duration, fetch func(ctx context.Context) (T, error)) *cached[T] {
	return &cached[T]{every: every, fetch: fetch}
}

// get returns the kept answer and when it was fetched, fetching it first when there is none or
// it is every old at now. The fetch outlives a request that gives up waiting for it.
func (c *cached[T]) get(ctx context.Context, now time.Time) (T, time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.IsZero() || now.Sub(c.at) >= c.every {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
		c.val, c.err = c.fetch(fctx)
		cancel()
		c.at = now
	}
	return c.val, c.at, c.err
}
