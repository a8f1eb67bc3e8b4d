package bridge

import (
	"context"
	"time"
)

// EndpointAlert is an endpoint found failing for its alert_after: endpoint.failing was sent.
type EndpointAlert struct {
	// Name is the endpoint's.
	Name string `json:"name"`
	// Since is when its first failed attempt since the last one delivered was made.
	Since time.Time `json:"since"`
	// AlertedAt is when endpoint.failing was sent.
	AlertedAt time.Time `json:"alerted_at"`
	// Error is the last failure seen before the alert ("answered 503", a transport error).
	Error string `json:"error"`
}

// EndpointAlertStore keeps which endpoints are failing, so that of several replicas seeing the
// same endpoint fail exactly one sends endpoint.failing, once per failing spell.
type EndpointAlertStore interface {
	// AlertEndpoint marks the endpoint failing since since, and writes events to the outbox in
	// the same transaction, when it is not marked already; it reports whether it marked it
	// (false: another replica, or an earlier call, did, and nothing was written).
	AlertEndpoint(ctx context.Context, a EndpointAlert, events ...Event) (bool, error)
	// EndpointRecovered ends the endpoint's failing spell (an attempt was delivered), so the next
	// one alerts again; it reports whether one was marked.
	EndpointRecovered(ctx context.Context, name string) (bool, error)
	// FailingEndpoints lists the endpoints marked failing, by name.
	FailingEndpoints(ctx context.Context) ([]EndpointAlert, error)
}
