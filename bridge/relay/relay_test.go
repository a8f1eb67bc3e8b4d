package relay

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
)

func secret(t *testing.T) webhook.Secret {
	s, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func endpoint(t *testing.T, c EndpointConfig) *Endpoint {
	t.Helper()
	if c.Name == "" {
		c.Name = "crm"
	}
	e, err := NewEndpoint(c)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestSendIsSignedAndVerifiable(t *testing.T) {
	s := secret(t)
	var got struct {
		header http.Header
		body   []byte
		err    error
	}
	rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.header, got.body = r.Header.Clone(), must(io.ReadAll(r.Body))
		got.err = webhook.Verify(r.Header, got.body, time.Now(), 0, s)
		w.WriteHeader(204)
	}))
	defer rx.Close()
	e := endpoint(t, EndpointConfig{URL: rx.URL, Secrets: []webhook.Secret{s}, AllowPrivate: true, Headers: map[string]string{"X-Tenant": "acme"}})
	m := Message{ID: "msg_1", Type: "transcription.completed", Time: time.Unix(1_800_000_000, 0), Data: map[string]any{"id": "t-1"}}
	res, err := Send(context.Background(), NewHTTPClient(true, time.Second), e, m, time.Now())
	if err != nil || !res.OK() || res.Status != 204 {
		t.Fatalf("Send = %+v, %v", res, err)
	}
	if got.err != nil {
		t.Errorf("the receiver could not verify the signature: %v", got.err)
	}
	var body map[string]any
	json.Unmarshal(got.body, &body)
	if body["type"] != "transcription.completed" || body["timestamp"] != "2027-01-15T08:00:00Z" || body["data"].(map[string]any)["id"] != "t-1" {
		t.Errorf("body = %s", got.body)
	}
	if got.header.Get("webhook-id") != "msg_1" || got.header.Get("X-Tenant") != "acme" || got.header.Get("Content-Type") != "application/json" {
		t.Errorf("headers = %v", got.header)
	}
}

func must(b []byte, _ error) []byte { return b }

func TestPrivateAddressesAreRefused(t *testing.T) {
	var hits atomic.Int32
	rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer rx.Close()
	e := endpoint(t, EndpointConfig{URL: rx.URL, Secrets: []webhook.Secret{secret(t)}})
	_, err := Send(context.Background(), NewHTTPClient(false, time.Second), e, Message{ID: "msg_1", Type: "ping"}, time.Now())
	var pa *ErrPrivateAddress
	if !errors.As(err, &pa) || hits.Load() != 0 {
		t.Errorf("Send to loopback without allow_private = %v (%d hits), want ErrPrivateAddress and no request", err, hits.Load())
	}
	for _, tc := range []struct {
		addr    string
		private bool
	}{
		{"127.0.0.1", true}, {"::1", true}, {"10.1.2.3", true}, {"172.16.0.1", true}, {"192.168.1.1", true},
		{"169.254.169.254", true}, {"fe80::1", true}, {"fc00::1", true}, {"100.64.0.1", true}, {"0.0.0.0", true},
		{"::ffff:127.0.0.1", true}, {"8.8.8.8", false}, {"2606:4700::1111", false}, {"172.32.0.1", false},
	} {
		if got := private(netip.MustParseAddr(tc.addr)); got != tc.private {
			t.Errorf("private(%s) = %v, want %v", tc.addr, got, tc.private)
		}
	}
}

func TestRedirectsAreNotFollowedAndTimeoutsEnd(t *testing.T) {
	var followed atomic.Int32
	rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/target", http.StatusFound)
		case "/target":
			followed.Add(1)
		case "/slow":
			time.Sleep(300 * time.Millisecond)
		}
	}))
	defer rx.Close()
	s := []webhook.Secret{secret(t)}
	res, err := Send(context.Background(), NewHTTPClient(true, time.Second), endpoint(t, EndpointConfig{URL: rx.URL + "/moved", Secrets: s, AllowPrivate: true}), Message{ID: "m", Type: "ping"}, time.Now())
	if err != nil || res.Status != http.StatusFound || res.OK() || followed.Load() != 0 {
		t.Errorf("redirect = %+v, %v (followed %d), want the 302 as the answer", res, err, followed.Load())
	}
	slow := endpoint(t, EndpointConfig{URL: rx.URL + "/slow", Secrets: s, AllowPrivate: true, Timeout: 50 * time.Millisecond})
	if _, err := Send(context.Background(), NewHTTPClient(true, 50*time.Millisecond), slow, Message{ID: "m", Type: "ping"}, time.Now()); err == nil {
		t.Errorf("a receiver slower than the timeout answered")
	}
}

func TestFilterAndTransform(t *testing.T) {
	e := endpoint(t, EndpointConfig{URL: "https://crm.example.com/hooks", Secrets: []webhook.Secret{secret(t)},
		Filter:    `.data.transcription.metadata.team == "sales"`,
		Transform: `{id: .data.transcription.id, text: .data.transcription.text}`})
	msg := func(team string) map[string]any {
		return map[string]any{"type": "transcription.completed", "data": map[string]any{"transcription": map[string]any{
			"id": "t-1", "text": "[00:00] Sam: hi", "metadata": map[string]any{"team": team}}}}
	}
	data, ok, err := e.Shape(msg("sales"))
	if err != nil || !ok || data.(map[string]any)["id"] != "t-1" || data.(map[string]any)["text"] != "[00:00] Sam: hi" {
		t.Errorf("Shape(sales) = %v, %v, %v", data, ok, err)
	}
	if _, ok, err := e.Shape(msg("support")); ok || err != nil {
		t.Errorf("Shape(support) passed the filter")
	}
	if !e.Wants("transcription.failed") {
		t.Errorf("an endpoint without events does not want every type")
	}
	only := endpoint(t, EndpointConfig{URL: "https://x.test/h", Secrets: []webhook.Secret{secret(t)}, Events: []string{"transcription.completed"}})
	if only.Wants("transcription.failed") || !only.Wants("transcription.completed") {
		t.Errorf("event filter not applied")
	}
}

func TestNewEndpointNamesTheSetting(t *testing.T) {
	s := []webhook.Secret{secret(t)}
	tests := []struct {
		c    EndpointConfig
		want string
	}{
		{EndpointConfig{Name: "crm", URL: "ftp://x", Secrets: s}, "webhook crm: url"},
		{EndpointConfig{Name: "crm", URL: "https://u:p@x.test/", Secrets: s}, "credentials"},
		{EndpointConfig{Name: "crm", URL: "https://x.test/"}, "secret is required"},
		{EndpointConfig{Name: "crm", URL: "https://x.test/", Secrets: s, Events: []string{"call.ended"}}, `unknown type "call.ended"`},
		{EndpointConfig{Name: "crm", URL: "https://x.test/", Secrets: s, Filter: ".data |"}, "webhook crm: filter"},
		{EndpointConfig{Name: "crm", URL: "https://x.test/", Secrets: s, Transform: "{"}, "webhook crm: transform"},
		{EndpointConfig{Name: "crm", URL: "https://x.test/", Secrets: s, Timeout: time.Hour}, "timeout"},
		{EndpointConfig{Name: "crm", URL: "https://x.test/", Secrets: s, Payload: "fat"}, "payload"},
	}
	for _, tc := range tests {
		if _, err := NewEndpoint(tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewEndpoint(%+v) = %v, want an error naming %q", tc.c, err, tc.want)
		}
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://crm.example.com/hooks?token=abc&x=1": "https://crm.example.com/hooks?redacted",
		"https://u:p@crm.example.com/h":               "https://crm.example.com/h",
		"http://127.0.0.1:8080/hooks":                 "http://127.0.0.1:8080/hooks",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
	// A failed send does not carry the query into its error.
	e := endpoint(t, EndpointConfig{URL: "http://127.0.0.1:1/hooks?token=s3cret", Secrets: []webhook.Secret{secret(t)}, AllowPrivate: true})
	_, err := Send(context.Background(), NewHTTPClient(true, time.Second), e, Message{ID: "m", Type: "ping"}, time.Now())
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Send error = %v, want a failure without the token", err)
	}
}
