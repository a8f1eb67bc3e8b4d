package relay

import (
	"context"
	"strconv"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/tracing"
)

// noSpan is what an attempt gets while tracing is off, or for an event of no job (an export's).
var noSpan = trace.SpanFromContext(context.Background())

// startAttempt starts the span of one delivery attempt of d, a child of its job's recording
// (bridge/tracing): its context carries the span, so Send's traceparent names it.
func startAttempt(ctx context.Context, d *bridge.Delivery) (context.Context, trace.Span) {
	if !tracing.Enabled() || d.JobID == "" {
		return ctx, noSpan
	}
	return tracing.Start(ctx, d.JobID, "webhook.deliver", trace.SpanKindClient,
		tracing.Endpoint.String(d.Endpoint), tracing.EventType.String(d.Type), tracing.WebhookID.String(d.WebhookID),
		tracing.Attempt.Int(d.Attempts), tracing.TranscriptionID.String(d.TranscriptionID))
}

// endAttempt ends an attempt's span with the receiver's answer (its status) or the failure.
func endAttempt(span trace.Span, res Result, err error) {
	if !span.IsRecording() {
		return
	}
	if res.Status != 0 {
		span.SetAttributes(tracing.HTTPStatus.Int(res.Status))
	}
	switch {
	case err != nil:
		span.SetStatus(codes.Error, err.Error())
	case res.Status != 0 && !res.OK():
		span.SetStatus(codes.Error, "answered "+strconv.Itoa(res.Status))
	}
	span.End()
}
