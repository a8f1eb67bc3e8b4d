package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
)

// TestWatchStore: while the store's ping fails, the first record carrying a store error becomes
// one WARN "store unreachable" and the next ones are dropped; once the ping answers, one INFO
// "store reachable again" counts them. A record whose error only looks like the store's (the
// ping answers) passes unchanged, and so does every other record; one whose error is surely
// the store's (a session cut by a restart) is an outage even though the ping answers.
func TestWatchStore(t *testing.T) {
	var buf syncBuffer
	var down atomic.Bool
	refused := errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")
	ping := func(context.Context) error {
		if down.Load() {
			return refused
		}
		return nil
	}
	unreachable := func(err error) bool {
		return strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "SQLSTATE 57P01")
	}
	certain := func(err error) bool { return strings.Contains(err.Error(), "SQLSTATE 57P01") }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := watchStore(ctx, slog.New(slog.NewTextHandler(&buf, nil)), unreachable, certain, ping)

	log.Error("api: list", "err", errors.New("dial tcp 10.0.0.1:443: connect: connection refused")) // the store answers
	down.Store(true)
	for range 5 {
		log.Error("relay: commit", "err", refused)
		log.With("source", "inbox").Warn("scan", "err", refused)
	}
	log.Error("webhook answered 500", "err", errors.New("500")) // not the store's
	down.Store(false)
	eventually(t, "store reachable again", &buf, func() bool { return strings.Contains(buf.String(), "store reachable again") })
	// A session a restart cut, found on a pooled connection once the server is back: the
	// store's for sure, an outage of its own (with the ping answering, a short one).
	log.Error("claim", "err", errors.New("FATAL: terminating connection due to administrator command (SQLSTATE 57P01)"))
	eventually(t, "the second outage's end", &buf, func() bool { return strings.Count(buf.String(), "store reachable again") == 2 })

	out := buf.String()
	for _, c := range []struct {
		line string
		want int
	}{
		{`level=ERROR msg="api: list"`, 1},
		{`msg="store unreachable; every part retries with backoff until it answers" during="relay: commit"`, 1},
		{`msg="store unreachable; every part retries with backoff until it answers" during=claim`, 1},
		{`level=ERROR msg=claim`, 0},
		{`msg="relay: commit"`, 0},
		{`msg=scan`, 0},
		{`msg="webhook answered 500"`, 1},
		{`msg="store reachable again"`, 2},
		{`failures=10`, 1},
	} {
		if got := strings.Count(out, c.line); got != c.want {
			t.Errorf("lines with %q = %d, want %d; log:\n%s", c.line, got, c.want, out)
		}
	}
}
