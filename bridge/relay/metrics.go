package relay

import (
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/tracing"
)

// Metrics hears what the relay does, for the bridge's /metrics (cmd wires a Prometheus
// implementation; this package imports none). A nil Metrics records nothing. The dead letters
// per endpoint and the endpoints' state are read from the store at scrape time, not here.
type Metrics interface {
	// Delivery counts the outcome of one attempt of a delivery to endpoint: Outcome*
	// constants.
	Delivery(endpoint, outcome string)
	// DeliveryLatency observes, for a delivery an endpoint accepted (2xx), the time from its
	// event's commit to the answer.
	DeliveryLatency(endpoint string, d time.Duration)
	// Retry counts one attempt that failed and will be tried again: stage is RetryDelivery.
	Retry(stage string)
}

// Outcomes of a delivery attempt (Metrics.Delivery).
const (
	// OutcomeDelivered: the endpoint answered 2xx.
	OutcomeDelivered = "delivered"
	// OutcomeFiltered: the endpoint's filter dropped the event; nothing was sent.
	OutcomeFiltered = "filtered"
	// OutcomeFailed: the attempt failed (an error answer, a timeout, a refused address) and
	// the delivery will be tried again.
	OutcomeFailed = "failed"
	// OutcomeDead: the attempt failed and the schedule is exhausted, or the endpoint is no
	// longer configured: a dead letter.
	OutcomeDead = "dead"
	// OutcomeGone: the endpoint answered 410 Gone and is disabled.
	OutcomeGone = "gone"
	// OutcomeDeletedUpstream: a full payload's transcription was deleted upstream; nothing was
	// sent, the delivery is settled and the job ended deleted (its transcription.deleted follows).
	OutcomeDeletedUpstream = "deleted_upstream"
)

// RetryDelivery is the stage of a delivery retried later (Metrics.Retry).
const RetryDelivery = "delivery"

// observe records outcome, the Outcome* of one attempt of d answered at answered.
func (r *Relay) observe(d *bridge.Delivery, outcome string, answered time.Time) {
	if r.Metrics == nil {
		return
	}
	r.Metrics.Delivery(d.Endpoint, outcome)
	switch outcome {
	case OutcomeDelivered:
		if !d.EventAt.IsZero() {
			r.Metrics.DeliveryLatency(d.Endpoint, max(0, answered.Sub(d.EventAt)))
		}
	case OutcomeFailed:
		r.Metrics.Retry(RetryDelivery)
	}
}

// deliveryAttrs returns the log attributes that tie a line to a delivery and its recording
// (endpoint, delivery_id, webhook_id, job_id and, when known, transcription_id), then more.
func deliveryAttrs(d *bridge.Delivery, more ...any) []any {
	attrs := append(make([]any, 0, 12+len(more)), "endpoint", d.Endpoint, "delivery_id", d.ID, "webhook_id", d.WebhookID, "job_id", d.JobID)
	if d.TranscriptionID != "" {
		attrs = append(attrs, "transcription_id", d.TranscriptionID)
	}
	if d.JobID != "" && tracing.Enabled() {
		attrs = append(attrs, "trace_id", tracing.TraceID(d.JobID))
	}
	return append(attrs, more...)
}
