// Package relay pushes the bridge's events onward as signed webhooks (Standard Webhooks). This
// first part holds the endpoint configuration, the SSRF-guarded HTTP client and the sending of
// one signed message; deliveries, retries and dead letters build on it.
package relay

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
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
	bridge.EventReportCompleted, bridge.EventReportFailed, bridge.EventHeld, bridge.EventSkipped, bridge.EventDeleted,
	"export.completed", "export.failed", EventEndpointDisabled,
}

// Payload forms.
const (
	PayloadFull = "full" // the transcription record as the API returns it, plus source and job
	PayloadThin = "thin" // ids and links only
)

// EndpointConfig is one webhook endpoint as configured: an entry of the bridge's webhooks
// section, loaded by koanf into it with the keys of its tags. The secrets are read from
// secret_file or secret by ReadSecrets (NewEndpoint calls it).
type EndpointConfig struct {
	// Name identifies the endpoint in commands and logs (bridge endpoints, bridge deliveries).
	Name string `koanf:"name"`
	// URL receives the POSTs (http or https; no credentials in it: use headers).
	URL string `koanf:"url"`
	// SecretFile holds the whsec_ secret(s) that sign every message, newest first (several,
	// separated by spaces, commas or lines, while a secret rotates).
	SecretFile string `koanf:"secret_file"`
	// Secret inlines one secret instead of secret_file (avoid: it ends up in the file).
	Secret string `koanf:"secret"`
	// Secrets sign every message; several while a secret rotates (the new one first). Set in
	// Go, or read from SecretFile or Secret by ReadSecrets.
	Secrets []webhook.Secret `koanf:"-"`
	// Events are the event types the endpoint receives; empty means every type.
	Events []string `koanf:"events"`
	// Filter is an optional jq expression; a message is sent only when it yields true.
	Filter string `koanf:"filter"`
	// Transform is an optional jq expression producing the body's data from the message.
	Transform string `koanf:"transform"`
	// Headers are added to every request (an Authorization header, for instance).
	Headers map[string]string `koanf:"headers"`
	// Timeout bounds one attempt (at most 60s).
	Timeout time.Duration `koanf:"timeout"`
	// Payload is full (the transcription record, plus source and job) or thin (ids and links).
	Payload string `koanf:"payload"`
	// AllowPrivate lets the endpoint resolve to loopback, private, link-local or reserved addresses
	// (refused otherwise, against SSRF).
	AllowPrivate bool `koanf:"allow_private"`
	// RetrySchedule is the wait before each retry (by default about ten attempts over about
	// three days), each drawn at random between half and one and a half times its step so a
	// receiver's periodic outage is not hit at every attempt; its length plus one is the number
	// of attempts before a dead letter.
	RetrySchedule []time.Duration `koanf:"retry_schedule"`
}

// Endpoint is a checked endpoint with its jq programs compiled.
type Endpoint struct {
	EndpointConfig
	filter, transform *gojq.Code
	// target is URL parsed and header the headers every POST carries (staticHeader), made
	// once by NewEndpoint.
	target *url.URL
	header http.Header
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
// "url: ..."; missing secrets are secret_file's), or nil. Unset fields are valid: they take
// their defaults. It reads no file: a secret_file or secret not read yet (ReadSecrets) counts
// as a secret.
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
	case c.SecretFile != "" && c.Secret != "":
		return errors.New("secret_file: set secret_file or secret, not both")
	case len(c.Secrets) == 0 && c.SecretFile == "" && c.Secret == "":
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

// ReadSecrets sets Secrets, when empty, to the secrets of the file SecretFile or of Secret
// (webhook.ParseSecrets). The error starts with the key at fault ("secret_file: open ...",
// "secret_file: secret: must start with whsec_", or for Secret ParseSecrets' own "secret:
// ...") and never contains a secret; it is "secret_file: a secret is required" when neither
// holds one.
func (c *EndpointConfig) ReadSecrets() error {
	if len(c.Secrets) > 0 {
		return nil
	}
	text, from := c.Secret, "" // ParseSecrets' errors start with "secret: ", the key of Secret
	if c.SecretFile != "" {
		b, err := os.ReadFile(c.SecretFile)
		if err != nil {
			return fmt.Errorf("secret_file: %w", err)
		}
		text, from = string(b), "secret_file: "
	}
	secrets, err := webhook.ParseSecrets(text)
	switch {
	case err != nil:
		return fmt.Errorf("%s%w", from, err)
	case len(secrets) == 0 && c.SecretFile != "":
		return fmt.Errorf("secret_file: %s holds no secret", c.SecretFile)
	case len(secrets) == 0:
		return errors.New("secret_file: a secret is required")
	}
	c.Secrets = secrets
	return nil
}

// NewEndpoint checks c (Validate), reads its secrets (ReadSecrets; the endpoint keeps them
// parsed, not Secret's text), fills in its defaults and compiles its jq expressions. The error
// names the endpoint and the setting at fault ("webhook crm: url: ...").
func NewEndpoint(c EndpointConfig) (*Endpoint, error) {
	err := c.Validate()
	if err == nil {
		err = c.ReadSecrets()
	}
	if err != nil {
		if c.Name == "" {
			return nil, fmt.Errorf("webhook: %w", err)
		}
		return nil, fmt.Errorf("webhook %s: %w", c.Name, err)
	}
	c.Secret = "" // parsed into Secrets, which print redacted
	c.setDefaults()
	e := &Endpoint{EndpointConfig: c}
	e.filter, _ = compile(c.Filter)
	e.transform, _ = compile(c.Transform)
	e.target, _ = url.Parse(c.URL) // Validate parsed it
	e.header = staticHeader(c.Headers)
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
