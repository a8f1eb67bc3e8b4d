// Package relay pushes the bridge's events onward as signed webhooks (Standard Webhooks). This
// first part holds the endpoint configuration, the SSRF-guarded HTTP client and the sending of
// one signed message; deliveries, retries and dead letters build on it.
package relay

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/itchyny/gojq"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
)

// EventEndpointDisabled is sent to the other endpoints when one answers 410 Gone.
const EventEndpointDisabled = "endpoint.disabled"

// EventTypes are the event types an endpoint may subscribe to.
var EventTypes = []string{
	bridge.EventUploaded, bridge.EventCompleted, bridge.EventFailed, bridge.EventInsufficientBalance,
	bridge.EventReportCompleted, bridge.EventReportFailed, bridge.EventHeld, bridge.EventSkipped,
	"export.completed", "export.failed", EventEndpointDisabled,
}

// Payload forms.
const (
	PayloadFull = "full" // the transcription record as the API returns it, plus source and job
	PayloadThin = "thin" // ids and links only
)

// EndpointConfig is one webhook endpoint as configured.
type EndpointConfig struct {
	// Name identifies the endpoint in commands and logs.
	Name string
	// URL receives the POSTs (http or https).
	URL string
	// Secrets sign every message; several while a secret rotates (the new one first).
	Secrets []webhook.Secret
	// Events the endpoint receives; empty means every type.
	Events []string
	// Filter is an optional jq expression; a message is sent only when it yields true.
	Filter string
	// Transform is an optional jq expression producing the body's data from the message.
	Transform string
	// Headers are added to every request.
	Headers map[string]string
	// Timeout bounds one attempt (default 15 s, at most 60 s).
	Timeout time.Duration
	// Payload is full (default) or thin.
	Payload string
	// AllowPrivate lets the endpoint resolve to loopback, private or link-local addresses.
	AllowPrivate bool
	// RetrySchedule is the wait before each retry; empty uses Schedule (about ten attempts over
	// about three days). Its length plus one is the number of attempts before a dead letter.
	RetrySchedule []time.Duration
}

// Endpoint is a checked endpoint with its jq programs compiled.
type Endpoint struct {
	EndpointConfig
	filter, transform *gojq.Code
}

// NewEndpoint checks c and compiles its jq expressions. The error names the endpoint and the
// setting at fault.
func NewEndpoint(c EndpointConfig) (*Endpoint, error) {
	e := &Endpoint{EndpointConfig: c}
	fail := func(format string, args ...any) (*Endpoint, error) {
		return nil, fmt.Errorf("webhook %s: %s", c.Name, fmt.Sprintf(format, args...))
	}
	if c.Name == "" {
		return nil, errors.New("webhook: name is required")
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fail("url %q is not an http(s) URL", c.URL)
	}
	if u.User != nil {
		return fail("url must not carry credentials; use headers")
	}
	if len(c.Secrets) == 0 {
		return fail("a secret is required (secret_file)")
	}
	for _, ev := range c.Events {
		if !slices.Contains(EventTypes, ev) {
			return fail("events: unknown type %q", ev)
		}
	}
	switch {
	case c.Timeout == 0:
		e.Timeout = 15 * time.Second
	case c.Timeout < 0 || c.Timeout > time.Minute:
		return fail("timeout %v is not within 0 to 60s", c.Timeout)
	}
	switch c.Payload {
	case "":
		e.Payload = PayloadFull
	case PayloadFull, PayloadThin:
	default:
		return fail("payload %q is not full or thin", c.Payload)
	}
	for i, d := range c.RetrySchedule {
		if d <= 0 {
			return fail("retry_schedule[%d]: %v is not positive", i, d)
		}
	}
	if len(c.RetrySchedule) == 0 {
		e.RetrySchedule = Schedule
	}
	if e.filter, err = compile(c.Filter); err != nil {
		return fail("filter: %v", err)
	}
	if e.transform, err = compile(c.Transform); err != nil {
		return fail("transform: %v", err)
	}
	return e, nil
}

func compile(src string) (*gojq.Code, error) {
	if src == "" {
		return nil, nil
	}
	q, err := gojq.Parse(src)
	if err != nil {
		return nil, err
	}
	return gojq.Compile(q)
}

// Wants reports whether the endpoint subscribes to event type typ.
func (e *Endpoint) Wants(typ string) bool {
	return len(e.Events) == 0 || slices.Contains(e.Events, typ)
}

// Shape applies the endpoint's filter and transform to a message (as decoded JSON: the
// {type, timestamp, data} object). It returns the data to send, or ok false when the filter
// drops the message.
func (e *Endpoint) Shape(msg map[string]any) (data any, ok bool, err error) {
	if e.filter != nil {
		v, _ := e.filter.Run(msg).Next()
		if err, isErr := v.(error); isErr {
			return nil, false, fmt.Errorf("webhook %s: filter: %w", e.Name, err)
		}
		if v != true {
			return nil, false, nil
		}
	}
	data = msg["data"]
	if e.transform != nil {
		v, _ := e.transform.Run(msg).Next()
		if err, isErr := v.(error); isErr {
			return nil, false, fmt.Errorf("webhook %s: transform: %w", e.Name, err)
		}
		data = v
	}
	return data, true, nil
}

// Unfiltered returns a copy of e without its filter and transform, for pings that must reach
// the endpoint whatever its jq programs say.
func (e *Endpoint) Unfiltered() *Endpoint {
	c := *e
	c.filter, c.transform = nil, nil
	return &c
}
