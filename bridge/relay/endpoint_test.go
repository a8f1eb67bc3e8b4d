package relay

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
		{with(func(c *EndpointConfig) { c.Secrets, c.SecretFile = nil, "crm.whsec" }), "<nil>"}, // read later
		{with(func(c *EndpointConfig) { c.Secrets, c.Secret = nil, "whsec_x" }), "<nil>"},
		{with(func(c *EndpointConfig) { c.SecretFile, c.Secret = "crm.whsec", "whsec_x" }), "secret_file: set secret_file or secret, not both"},
		{with(func(c *EndpointConfig) { c.Timeout = -time.Second }), "timeout: -1s is not within 0 to 60s"},
		{with(func(c *EndpointConfig) { c.Timeout = 2 * time.Minute }), "timeout: 2m0s is not within 0 to 60s"},
		{with(func(c *EndpointConfig) { c.Payload = "fat" }), `payload: "fat" is not full or thin`},
		{with(func(c *EndpointConfig) { c.Events = []string{"call.ended"} }), `events: unknown type "call.ended"`},
		{with(func(c *EndpointConfig) { c.RetrySchedule = []time.Duration{time.Second, 0} }), "retry_schedule[1]: 0s is not positive"},
		{with(func(c *EndpointConfig) { c.Filter = ".data |" }), "filter: unexpected EOF"},
		{with(func(c *EndpointConfig) { c.Transform = "{" }), "transform: unexpected EOF"},
		{with(func(c *EndpointConfig) { c.Redact, c.DefaultRegion = []string{"email", "phone"}, "GB" }), "<nil>"},
		{with(func(c *EndpointConfig) { c.Redact = []string{"names"} }), `redact: unknown kind "names" (email, phone, card, iban, ip)`},
		{with(func(c *EndpointConfig) { c.RedactPatterns = map[string]string{"badge": "EMP-[0-9"} }),
			"redact_patterns.badge: error parsing regexp: missing closing ]: `[0-9`"},
		{with(func(c *EndpointConfig) { c.DefaultRegion = "UK" }), `default_region: "UK" is not a region code (ISO 3166, as US or GB)`},
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

// TestEndpointConfigReadSecrets: the secrets come from secret_file, else secret; each error
// starts with the key at fault and never shows a secret.
func TestEndpointConfigReadSecrets(t *testing.T) {
	a, b := secret(t), secret(t)
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	rotating := write("rotating", a.Encode()+"\n"+b.Encode()+"\n")
	bad := write("bad", strings.TrimPrefix(a.Encode(), "whsec_"))
	empty := write("empty", "\n")
	for _, tc := range []struct {
		c    EndpointConfig
		n    int
		want string
	}{
		{EndpointConfig{SecretFile: rotating}, 2, "<nil>"},
		{EndpointConfig{Secret: a.Encode()}, 1, "<nil>"},
		{EndpointConfig{Secrets: []webhook.Secret{a}, SecretFile: "absent"}, 1, "<nil>"}, // set in Go: kept
		{EndpointConfig{SecretFile: filepath.Join(dir, "absent")}, 0, "secret_file: open " + filepath.Join(dir, "absent") + ": no such file or directory"},
		{EndpointConfig{SecretFile: bad}, 0, "secret_file: secret: must start with whsec_"},
		{EndpointConfig{SecretFile: empty}, 0, "secret_file: " + empty + " holds no secret"},
		{EndpointConfig{Secret: "whsec_%%%"}, 0, "secret: the part after whsec_ is not base64"},
		{EndpointConfig{}, 0, "secret_file: a secret is required"},
	} {
		c := tc.c
		err := c.ReadSecrets()
		if got := fmt.Sprint(err); got != tc.want || len(c.Secrets) != tc.n {
			t.Errorf("ReadSecrets(%q, %q) = %d secrets, %v; want %d, %v", tc.c.SecretFile, tc.c.Secret, len(c.Secrets), got, tc.n, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), strings.TrimPrefix(a.Encode(), "whsec_")) {
			t.Errorf("ReadSecrets: %v shows the secret", err)
		}
	}
	e, err := NewEndpoint(EndpointConfig{Name: "crm", URL: "https://x.test/", SecretFile: rotating})
	if err != nil || len(e.Secrets) != 2 {
		t.Errorf("NewEndpoint(secret_file) = %v, want 2 secrets read from the file", err)
	}
	if e, err := NewEndpoint(EndpointConfig{Name: "crm", URL: "https://x.test/", Secret: a.Encode()}); err != nil || len(e.Secrets) != 1 ||
		strings.Contains(fmt.Sprintf("%+v", e), strings.TrimPrefix(a.Encode(), "whsec_")) {
		t.Errorf("NewEndpoint(secret) = %+v, %v; want 1 secret and its text not kept", e, err)
	}
	if _, err := NewEndpoint(EndpointConfig{Name: "crm", URL: "https://x.test/", SecretFile: bad}); fmt.Sprint(err) != "webhook crm: secret_file: secret: must start with whsec_" {
		t.Errorf("NewEndpoint(bad secret_file) = %v, want the endpoint and the key named", err)
	}
}
