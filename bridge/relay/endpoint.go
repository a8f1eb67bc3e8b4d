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

// DefaultTimeout bounds one attempt when an endpoint sets no timeout.
const DefaultTimeout = 15 * time.Second

// setDefaults fills in the defaults of unset fields: a 15 s timeout, the full payload, the
// default retry schedule.
func (c *EndpointConfig) setDefaults() {
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Payload == "" {
		c.Payload = PayloadFull
	}
	if len(c.RetrySchedule) == 0 {
		c.RetrySchedule = Schedule
	}
}

// Validate returns the first setting at fault, its error starting with the key (as in
// "url: ..."; the secrets are secret_file), or nil. Unset fields are valid: they take their
// defaults.
func (c *EndpointConfig) Validate() error {
	if c.Name == "" {
		return errors.New("name: required")
	}
	u, err := url.Parse(c.URL)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("url: %q is not an http(s) URL", c.URL)
	case u.User != nil:
		return errors.New("url: must not carry credentials; use headers")
	case len(c.Secrets) == 0:
		return errors.New("secret_file: a secret is required")
	case c.Timeout < 0 || c.Timeout > time.Minute:
		return fmt.Errorf("timeout: %v is not within 0 to 60s", c.Timeout)
	case c.Payload != "" && c.Payload != PayloadFull && c.Payload != PayloadThin:
		return fmt.Errorf("payload: %q is not full or thin", c.Payload)
	}
	for _, ev := range c.Events {
		if !slices.Contains(EventTypes, ev) {
			return fmt.Errorf("events: unknown type %q", ev)
		}
	}
	for i, d := range c.RetrySchedule {
		if d <= 0 {
			return fmt.Errorf("retry_schedule[%d]: %v is not positive", i, d)
		}
	}
	if _, err := compile(c.Filter); err != nil {
		return fmt.Errorf("filter: %w", err)
	}
	if _, err := compile(c.Transform); err != nil {
		return fmt.Errorf("transform: %w", err)
	}
	return nil
}

// NewEndpoint checks c (Validate), fills in its defaults and compiles its jq expressions. The
// error names the endpoint and the setting at fault ("webhook crm: url: ...").
func NewEndpoint(c EndpointConfig) (*Endpoint, error) {
	if err := c.Validate(); err != nil {
		if c.Name == "" {
			return nil, fmt.Errorf("webhook: %w", err)
		}
		return nil, fmt.Errorf("webhook %s: %w", c.Name, err)
	}
	c.setDefaults()
	e := &Endpoint{EndpointConfig: c}
	e.filter, _ = compile(c.Filter)
	e.transform, _ = compile(c.Transform)
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
