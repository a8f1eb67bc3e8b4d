package tracing

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"math/rand/v2"
	"sync"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// forcedIDs are the ids a root span must take (a recording's root, derived from its job).
type forcedIDs struct {
	trace trace.TraceID
	span  trace.SpanID
}

type idsKey struct{}

func withIDs(ctx context.Context, t trace.TraceID, s trace.SpanID) context.Context {
	return context.WithValue(ctx, idsKey{}, forcedIDs{t, s})
}

// IDs is the provider's id generator: a recording's root span takes the ids derived from its
// job (Discovered); every other span gets random ids, as the SDK's own generator gives.
type IDs struct {
	mu  sync.Mutex
	rnd *rand.ChaCha8
}

var _ sdktrace.IDGenerator = (*IDs)(nil)

// NewIDs returns the id generator to give the provider (sdktrace.WithIDGenerator).
func NewIDs() *IDs {
	var seed [32]byte
	crand.Read(seed[:])
	return &IDs{rnd: rand.NewChaCha8(seed)}
}

// NewIDs returns a new root span's trace and span ids.
func (g *IDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if f, ok := ctx.Value(idsKey{}).(forcedIDs); ok {
		return f.trace, f.span
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var t trace.TraceID
	for !t.IsValid() {
		binary.NativeEndian.PutUint64(t[:8], g.rnd.Uint64())
		binary.NativeEndian.PutUint64(t[8:], g.rnd.Uint64())
	}
	return t, g.span()
}

// NewSpanID returns a new child span's id.
func (g *IDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.span()
}

func (g *IDs) span() trace.SpanID {
	var s trace.SpanID
	for !s.IsValid() {
		binary.NativeEndian.PutUint64(s[:], g.rnd.Uint64())
	}
	return s
}
