package bridge

import (
	"context"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/transcript-bridge/bridge/bridge/tracing"
)

// A recording's trace (bridge/tracing): its root span when its job is made, then a span for
// each stage that works on it here (the upload, what the tracker learned, the reports); the
// relay adds one per delivery attempt of its events.

// traceDiscovered records the root span of each new job's recording.
func traceDiscovered(ctx context.Context, jobs []Job) {
	if !tracing.Enabled() {
		return
	}
	for i := range jobs {
		tracing.Discovered(ctx, jobs[i].ID, tracing.Source.String(jobs[i].Source), tracing.Item.String(jobs[i].ItemID))
	}
}

// startStage starts the span of a stage of j's recording.
func startStage(ctx context.Context, j *Job, name string) (context.Context, trace.Span) {
	if !tracing.Enabled() {
		return ctx, trace.SpanFromContext(context.Background())
	}
	return tracing.Start(ctx, j.ID, name, trace.SpanKindInternal, tracing.Source.String(j.Source), tracing.Item.String(j.ItemID))
}

// endStage ends a stage's span with the job's state and transcription as they are now, and err.
func endStage(span trace.Span, j *Job, err error) {
	if !span.IsRecording() {
		span.End()
		return
	}
	span.SetAttributes(tracing.State.String(string(j.State)))
	if j.TranscriptionID != "" {
		span.SetAttributes(tracing.TranscriptionID.String(j.TranscriptionID))
	}
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
