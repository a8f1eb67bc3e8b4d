package bridge

import (
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// DeliveryStatus is where a webhook delivery stands.
type DeliveryStatus string

// Delivery statuses.
const (
	// DeliveryPending: due at NextAttemptAt (again after a failed attempt or a replay).
	DeliveryPending DeliveryStatus = "pending"
	// DeliveryDelivered: the endpoint took it (or its filter dropped it).
	DeliveryDelivered DeliveryStatus = "delivered"
	// DeliveryDead: a dead letter (retries exhausted, 410, endpoint gone); a replay brings it back.
	DeliveryDead DeliveryStatus = "dead"
)

// DeliveryStatuses lists every delivery status.
var DeliveryStatuses = []DeliveryStatus{DeliveryPending, DeliveryDelivered, DeliveryDead}

// Delivery is one event on its way to one endpoint.
type Delivery struct {
	ID string `json:"id"`
	// EventID is the outbox event; Endpoint its destination.
	EventID  int64  `json:"event_id"`
	Endpoint string `json:"endpoint"`
	// WebhookID is the webhook-id header: globally unique (NewWebhookID), fixed when the
	// delivery is created and the same on every attempt and replay.
	WebhookID       string          `json:"webhook_id"`
	Type            string          `json:"type"`
	JobID           string          `json:"job_id"`
	TranscriptionID string          `json:"transcription_id,omitempty"`
	Data            json.RawMessage `json:"data"`
	EventAt         time.Time       `json:"event_at"`
	Status          DeliveryStatus  `json:"status"`
	Attempts        int             `json:"attempts"`
	NextAttemptAt   time.Time       `json:"next_attempt_at"`
	LastStatus      int             `json:"last_status,omitempty"`
	LastError       string          `json:"last_error,omitempty"`
	CreatedAt       time.Time       `json:"created_at"`
	UpdatedAt       time.Time       `json:"updated_at"`
	// LeaseUntil is the claim this copy was handed (Claim sets it; zero for a delivery not
	// claimed): Record writes the new state only while the delivery is still under it.
	LeaseUntil time.Time `json:"-"`
}

// Attempt is one try of a delivery.
type Attempt struct {
	At       time.Time `json:"at"`
	Status   int       `json:"status"`
	Latency  float64   `json:"latency_ms"`
	Response string    `json:"response,omitempty"`
	Error    string    `json:"error,omitempty"`
}

// EndpointAttempt is one attempt with the delivery it was made for (DeliveryStore's
// EndpointAttempts).
type EndpointAttempt struct {
	Attempt
	// DeliveryID and Type are the delivery's id and event type.
	DeliveryID string `json:"delivery_id"`
	Type       string `json:"type"`
}

// DeliveryFilter selects deliveries to list or replay. Zero fields match all.
type DeliveryFilter struct {
	Endpoint     string
	Status       DeliveryStatus
	Since, Until time.Time
	Limit        int
	// Missed keeps only what the endpoint has not received: pending and dead deliveries (the
	// replay after an outage, bridge deliveries replay --missed).
	Missed bool
}

// ErrDeliveryNotFound is returned by DeliveryStore.Delivery and Record for an unknown delivery.
var ErrDeliveryNotFound = errors.New("not found")

// ErrUnknownEvent is returned by DeliveryStore.FanOut for a message naming no stored event.
var ErrUnknownEvent = errors.New("no such event in the outbox")

// webhookIDPrefix marks a Standard Webhooks message id.
const webhookIDPrefix = "msg_"

// webhookIDEncoding is lower-case Crockford base32: its alphabet is in ASCII order, so ids sort
// as the bytes they encode.
var webhookIDEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// NewWebhookID returns a fresh, globally unique webhook-id: "msg_" and a UUIDv7 in 26
// characters of lower-case Crockford base32, so ids made later sort later. A message keeps its
// id on every attempt and replay; receivers deduplicate by it. Stores call it when they create a
// delivery (DeliveryStore.FanOut). It fails only when the system's random source does.
func NewWebhookID() (string, error) {
	u, err := uuid.NewV7()
	if err != nil {
		return "", fmt.Errorf("new webhook-id: %w", err)
	}
	return webhookIDPrefix + webhookIDEncoding.EncodeToString(u[:]), nil
}
