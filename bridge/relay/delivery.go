package relay

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// Delivery statuses.
const (
	StatusPending   = "pending"
	StatusDelivered = "delivered"
	StatusDead      = "dead"
)

// Delivery is one event on its way to one endpoint.
type Delivery struct {
	ID string `json:"id"`
	// EventID is the outbox event; Endpoint its destination.
	EventID  int64  `json:"event_id"`
	Endpoint string `json:"endpoint"`
	// WebhookID is the webhook-id header: globally unique (webhook.NewID), fixed when the
	// delivery is created and the same on every attempt and replay.
	WebhookID       string          `json:"webhook_id"`
	Type            string          `json:"type"`
	JobID           string          `json:"job_id"`
	TranscriptionID string          `json:"transcription_id,omitempty"`
	Data            json.RawMessage `json:"data"`
	EventAt         time.Time       `json:"event_at"`
	Status          string          `json:"status"`
	Attempts        int             `json:"attempts"`
	NextAttemptAt   time.Time       `json:"next_attempt_at"`
	LastStatus      int             `json:"last_status,omitempty"`
	LastError       string          `json:"last_error,omitempty"`
	CreatedAt       time.Time       `json:"created_at"`
	UpdatedAt       time.Time       `json:"updated_at"`
}

// Attempt is one try of a delivery.
type Attempt struct {
	At       time.Time `json:"at"`
	Status   int       `json:"status"`
	Latency  float64   `json:"latency_ms"`
	Response string    `json:"response,omitempty"`
	Error    string    `json:"error,omitempty"`
}

// DeliveryFilter selects deliveries to list or replay. Zero fields match all.
type DeliveryFilter struct {
	Endpoint     string
	Status       string
	Since, Until time.Time
	Limit        int
}

// ErrUnknownEvent is returned by Store.FanOut for a message naming no stored event.
var ErrUnknownEvent = errors.New("no such event in the outbox")

// Store keeps deliveries; bridge/sqlite implements it beside the bridge.Store.
type Store interface {
	// FanOut creates one pending delivery of the event per endpoint (unique on event and
	// endpoint, so a redelivered message adds nothing), each with a fresh webhook-id from
	// webhook.NewID, and marks the event handed on, in one transaction. It fails with ErrUnknownEvent when the outbox has no such event.
	FanOut(ctx context.Context, ref bridge.EventRef, endpoints []string, now time.Time) error
	// Abandon turns the pending deliveries of endpoints not in known into dead letters (an
	// endpoint removed from the configuration).
	Abandon(ctx context.Context, known []string, now time.Time) (int, error)
	// Claim leases up to limit due deliveries of endpoint (all endpoints when empty) that is
	// enabled, each the oldest pending one of its job at its endpoint (per-transcription order),
	// until now+lease.
	Claim(ctx context.Context, endpoint string, now time.Time, lease time.Duration, limit int) ([]Delivery, error)
	// Record stores an attempt and the delivery's new state (status, attempts, next attempt).
	Record(ctx context.Context, d *Delivery, a Attempt) error
	// Deliveries lists deliveries matching f, newest first.
	Deliveries(ctx context.Context, f DeliveryFilter) ([]Delivery, error)
	// Delivery returns one delivery with its attempts.
	Delivery(ctx context.Context, id string) (*Delivery, []Attempt, error)
	// Replay makes matching deliveries pending again, due now, keeping their webhook-id. It
	// returns how many it changed.
	Replay(ctx context.Context, ids []string, f DeliveryFilter, now time.Time) (int, error)
	// DisableEndpoint and EnableEndpoint switch an endpoint off (after 410) and on again;
	// DisabledEndpoints says which are off and why.
	DisableEndpoint(ctx context.Context, name, reason string, now time.Time, events ...bridge.Event) error
	EnableEndpoint(ctx context.Context, name string) error
	DisabledEndpoints(ctx context.Context) (map[string]string, error)
}

// Schedule is the delay before each retry: the first within seconds, about ten attempts over
// about three days.
var Schedule = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
	10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour}

// MaxRetryAfter caps how long an endpoint's Retry-After may postpone a delivery.
const MaxRetryAfter = 6 * time.Hour

// nextDelay returns the wait after failed attempt n (1-based) of schedule, with ±20% jitter,
// honouring the endpoint's Retry-After up to MaxRetryAfter; ok is false when the schedule is
// exhausted.
func nextDelay(schedule []time.Duration, n int, retryAfter time.Duration) (time.Duration, bool) {
	if n > len(schedule) {
		return 0, false
	}
	d := schedule[n-1]
	d = time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
	if retryAfter > d {
		d = min(retryAfter, MaxRetryAfter)
	}
	return d, true
}
