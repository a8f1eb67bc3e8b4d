package relay

import (
	"fmt"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
)

// TestEndpointConfigValidate: each error starts with the key at fault; unset fields are valid.
func TestEndpointConfigValidate(t *testing.T) {
	s := []webhook.Secret{secret(t)}
	ok := EndpointConfig{Name: "crm", URL: "https://x.test/h", Secrets: s}
	with := func(edit func(*EndpointConfig)) EndpointConfig {
		c := ok
		edit(&c)
		return c
	}
	for _, tc := range []struct {
		c    EndpointConfig
		want string
	}{
		{ok, "<nil>"},
		{with(func(c *EndpointConfig) { c.Name = "" }), "name: required"},
		{with(func(c *EndpointConfig) { c.URL = "ftp://x.test" }), `url: "ftp://x.test" is not an http(s) URL`},
		{with(func(c *EndpointConfig) { c.URL = "https://u:p@x.test/" }), "url: must not carry credentials; use headers"},
		{with(func(c *EndpointConfig) { c.Secrets = nil }), "secret_file: a secret is required"},
		{with(func(c *EndpointConfig) { c.Timeout = -time.Second }), "timeout: -1s is not within 0 to 60s"},
		{with(func(c *EndpointConfig) { c.Timeout = 2 * time.Minute }), "timeout: 2m0s is not within 0 to 60s"},
		{with(func(c *EndpointConfig) { c.Payload = "fat" }), `payload: "fat" is not full or thin`},
		{with(func(c *EndpointConfig) { c.Events = []string{"call.ended"} }), `events: unknown type "call.ended"`},
		{with(func(c *EndpointConfig) { c.RetrySchedule = []time.Duration{time.Second, 0} }), "retry_schedule[1]: 0s is not positive"},
		{with(func(c *EndpointConfig) { c.Filter = ".data |" }), "filter: unexpected EOF"},
		{with(func(c *EndpointConfig) { c.Transform = "{" }), "transform: unexpected EOF"},
	} {
		if got := fmt.Sprint(tc.c.Validate()); got != tc.want {
			t.Errorf("Validate(%s %s) = %v, want %v", tc.c.Name, tc.c.URL, got, tc.want)
		}
	}
}

// TestNewEndpointDefaults: unset fields take their defaults; set ones are kept.
func TestNewEndpointDefaults(t *testing.T) {
	s := []webhook.Secret{secret(t)}
	for _, tc := range []struct {
		c       EndpointConfig
		timeout time.Duration
		payload string
		retries int
	}{
		{EndpointConfig{Name: "crm", URL: "https://x.test/", Secrets: s}, DefaultTimeout, PayloadFull, len(Schedule)},
		{EndpointConfig{Name: "crm", URL: "https://x.test/", Secrets: s, Timeout: time.Second, Payload: PayloadThin,
			RetrySchedule: []time.Duration{time.Minute}}, time.Second, PayloadThin, 1},
	} {
		e, err := NewEndpoint(tc.c)
		if err != nil {
			t.Fatal(err)
		}
		if e.Timeout != tc.timeout || e.Payload != tc.payload || len(e.RetrySchedule) != tc.retries {
			t.Errorf("NewEndpoint(%+v) = timeout %v, payload %s, %d retries, want %v, %s, %d", tc.c, e.Timeout, e.Payload,
				len(e.RetrySchedule), tc.timeout, tc.payload, tc.retries)
		}
	}
}
