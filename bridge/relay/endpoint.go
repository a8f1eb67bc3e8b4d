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
	"github.com/transcript-bridge/bridge/bridge/redact"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
)

// EventEndpointDisabled is sent to the other endpoints when one answers 410 Gone.
const EventEndpointDisabled = "endpoint.disabled"

// EventTypes are the event types an endpoint may subscribe to.
var EventTypes = []string{
	bridge.EventUploaded, bridge.EventCompleted, bridge.EventFailed, bridge.EventInsufficientBalance,
	bridge.EventReportCompleted, bridge.EventReportFailed, bridge.EventHeld, bridge.EventSkipped, bridge.EventDeleted,
	"export.completed", "export.failed", EventEndpointDisabled, EventEndpointFailing,
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
	// Events are the event types the endpoint receives; empty means every type but
	// endpoint.failing, which goes only to the endpoints that name it.
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
	// of attempts before a dead letter (a try whose full payload the API could not give is
	// tried again but not counted: the endpoint was not asked).
	RetrySchedule []time.Duration `koanf:"retry_schedule"`
	// Redact lists what is removed from full payloads before they are signed: email, phone,
	// card, iban, ip (each match becomes [email], [phone], ...; the data's redactions counts them).
	Redact []string `koanf:"redact"`
	// RedactPatterns are named regular expressions (RE2) also removed; each match becomes
	// [name]. A pattern that does not compile refuses to start, naming its key.
	RedactPatterns map[string]string `koanf:"redact_patterns"`
	// DefaultRegion is the region (ISO 3166 code, as US or GB) of phone numbers written
	// without a country code; without one only numbers starting with + are redacted.
	DefaultRegion string `koanf:"default_region"`
	// RateLimit is the endpoint's quota, "N/period": at most N requests at once and N per
	// period on average ("10/s", "100/10s", "600/m"); empty: none. Replicas share it, each
	// taking N divided by the live replicas. A Retry-After the endpoint answers is honoured
	// beside it.
	RateLimit string `koanf:"rate_limit"`
	// AlertAfter is how long the endpoint may fail (no attempt delivered since the first that
	// failed) before endpoint.failing is sent, once (default 1h).
	AlertAfter time.Duration `koanf:"alert_after"`
}

// redaction returns the redaction settings of c.
func (c *EndpointConfig) redaction() redact.Config {
	return redact.Config{Kinds: c.Redact, Patterns: c.RedactPatterns, DefaultRegion: c.DefaultRegion}
}

// Endpoint is a checked endpoint with its jq programs compiled.
type Endpoint struct {
	EndpointConfig
	filter, transform *gojq.Code
	// quota is this replica's share of RateLimit; nil: none.
	quota *quota
	// redactor removes what Redact and RedactPatterns name from full payloads; nil: nothing.
	redactor *redact.Set
	// target is URL parsed and header the headers every POST carries (staticHeader), made
	// once by NewEndpoint.
	target *url.URL
	header http.Header
}

// DefaultAlertAfter is how long an endpoint fails before endpoint.failing when it sets no
// alert_after.
const DefaultAlertAfter = time.Hour

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
	if c.AlertAfter == 0 {
		c.AlertAfter = DefaultAlertAfter
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
	if c.RateLimit != "" {
		if _, _, err := ParseRateLimit(c.RateLimit); err != nil {
			return fmt.Errorf("rate_limit: %w", err)
		}
	}
	if c.AlertAfter < 0 {
		return fmt.Errorf("alert_after: %v is negative", c.AlertAfter)
	}
	if err := c.redaction().Validate(); err != nil {
		return err
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
	if c.RateLimit != "" {
		n, per, _ := ParseRateLimit(c.RateLimit) // Validate parsed it
		e.quota = newQuota(n, per)
	}
	if rc := c.redaction(); !rc.Empty() {
		e.redactor, _ = redact.New(rc) // Validate compiled it
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

// Wants reports whether the endpoint subscribes to event type typ. endpoint.failing goes only
// to endpoints that name it in Events (an alerting channel): the failing endpoint, subscribed
// to every type, would not take it.
func (e *Endpoint) Wants(typ string) bool {
	return (len(e.Events) == 0 && typ != EventEndpointFailing) || slices.Contains(e.Events, typ)
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
