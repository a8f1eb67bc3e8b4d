// Package tracing gives every recording one OpenTelemetry trace, from its discovery through its
// upload, tracking, reports and every delivery attempt of its events, across steps, restarts
// and replicas: each stage's span is a child of the recording's root span, and both the trace's
// id and the root's are derived from the job's id, so nothing has to be stored or passed between
// stages to keep them in one trace.
//
// Tracing is off until Install is given a provider (Setup, from the standard OTEL_* variables);
// while off, every function here is a cheap no-op. No secret is ever an attribute: spans carry
// ids, names, states and HTTP statuses only.
package tracing

import (
	"context"
	"crypto/sha256"
	"net/http"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Attribute keys of the bridge's spans.
const (
	JobID           = attribute.Key("bridge.job.id")
	Source          = attribute.Key("bridge.source")
	Item            = attribute.Key("bridge.item.id")
	TranscriptionID = attribute.Key("bridge.transcription.id")
	State           = attribute.Key("bridge.job.state")
	Endpoint        = attribute.Key("bridge.endpoint")
	EventType       = attribute.Key("bridge.event.type")
	WebhookID       = attribute.Key("bridge.webhook.id")
	Attempt         = attribute.Key("bridge.delivery.attempt")
	HTTPStatus      = attribute.Key("http.response.status_code")
)

// instrumentation is the name the bridge's tracer goes by.
const instrumentation = "github.com/transcript-bridge/bridge"

// state is what Install set.
type state struct {
	tracer  trace.Tracer
	sampled func(trace.TraceID) bool
}

var current atomic.Pointer[state]

// Install makes tp the provider of the bridge's spans; sampled says whether a recording's trace
// is sampled (the root's decision, so that every stage, in any process, agrees with it); nil
// samples all. Install(nil, nil) turns tracing off.
func Install(tp trace.TracerProvider, sampled func(trace.TraceID) bool) {
	if tp == nil {
		current.Store(nil)
		return
	}
	if sampled == nil {
		sampled = func(trace.TraceID) bool { return true }
	}
	current.Store(&state{tracer: tp.Tracer(instrumentation), sampled: sampled})
}

// Enabled reports whether spans are recorded.
func Enabled() bool { return current.Load() != nil }

// TraceID returns the trace id of job jobID's recording, as hex; "" for an empty id.
func TraceID(jobID string) string {
	id, ok := traceID(jobID)
	if !ok {
		return ""
	}
	return id.String()
}

// traceID derives the trace id from the job's id: a hash, not the UUID itself, whose version
// and variant bits would bias a ratio sampler (it reads the id's last 8 bytes as a number).
func traceID(jobID string) (trace.TraceID, bool) {
	var id trace.TraceID
	if jobID == "" {
		return id, false
	}
	sum := sha256.Sum256([]byte("trace:" + jobID))
	copy(id[:], sum[:16])
	return id, id.IsValid()
}

// rootSpanID is the id of the root span of job jobID's recording.
func rootSpanID(jobID string) trace.SpanID {
	sum := sha256.Sum256([]byte("recording:" + jobID))
	var id trace.SpanID
	copy(id[:], sum[:8])
	if !id.IsValid() {
		id[7] = 1
	}
	return id
}

// noopSpan is what the functions return while tracing is off.
var noopSpan = noop.Span{}

// Discovered records the root span of job jobID's recording, as its job is made: the span every
// later stage's span is a child of.
func Discovered(ctx context.Context, jobID string, attrs ...attribute.KeyValue) {
	s := current.Load()
	if s == nil {
		return
	}
	tid, ok := traceID(jobID)
	if !ok {
		return
	}
	ctx = withIDs(ctx, tid, rootSpanID(jobID))
	_, span := s.tracer.Start(ctx, "recording.discovered", trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(append(attrs, JobID.String(jobID))...))
	span.End()
}

// Start starts the span of a stage of job jobID's recording (upload, tracking, reports, a
// delivery attempt), a child of the recording's root span; end it with span.End(). While
// tracing is off, or for an id that is not a job's, the span does nothing.
func Start(ctx context.Context, jobID, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	s := current.Load()
	if s == nil {
		return ctx, noopSpan
	}
	tid, ok := traceID(jobID)
	if !ok {
		return ctx, noopSpan
	}
	flags := trace.TraceFlags(0)
	if s.sampled(tid) {
		flags = trace.FlagsSampled
	}
	root := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: rootSpanID(jobID), TraceFlags: flags, Remote: true})
	ctx = trace.ContextWithRemoteSpanContext(ctx, root)
	return s.tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(append(attrs, JobID.String(jobID))...))
}

// propagator writes W3C traceparent (and tracestate) headers.
var propagator = propagation.TraceContext{}

// Inject sets the traceparent header of an outgoing request from ctx's span, so that its
// receiver can continue the trace; it does nothing without a recording span.
func Inject(ctx context.Context, h http.Header) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	propagator.Inject(ctx, propagation.HeaderCarrier(h))
}
