package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
)

// TestEndpointsListLabels: bridge endpoints list writes an endpoint's state with the status
// page's words: enabled, failing with its counts, disabled with its reason.
func TestEndpointsListLabels(t *testing.T) {
	s, _ := webhook.NewSecret()
	e, err := relay.NewEndpoint(relay.EndpointConfig{Name: "crm", URL: "https://crm.example/hook", Secrets: []webhook.Secret{s}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		health       *bridge.EndpointHealth
		state, label string
	}{
		{nil, "enabled", "enabled"},
		{&bridge.EndpointHealth{Dead: 2, Retrying: 1}, "failing", "failing: 2 dead letters, 1 retrying"},
		{&bridge.EndpointHealth{Disabled: "answered 410 Gone", Dead: 4}, "disabled", "disabled: answered 410 Gone"},
	} {
		health := map[string]*bridge.EndpointHealth{}
		if c.health != nil {
			health["crm"] = c.health
		}
		v := newEndpointView(e, health)
		if v.State != c.state || v.label != c.label {
			t.Errorf("newEndpointView(crm, %+v) = state %q, label %q; want %q, %q", c.health, v.State, v.label, c.state, c.label)
		}
	}
}

// TestFailingEndpointShown (issue 35, point 5): an endpoint whose endpoint.failing alert is on
// reads "failing for 1h12m: <last error>" in bridge endpoints list (table and JSON), and bridge
// doctor warns of it with the commands that show and replay what it missed.
func TestFailingEndpointShown(t *testing.T) {
	ctx := context.Background()
	rx := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer rx.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "bridge.db")
	s, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	since := time.Now().Add(-72*time.Minute - 20*time.Second)
	a := bridge.EndpointAlert{Name: "crm", Since: since, AlertedAt: since.Add(time.Hour), Error: "answered 503"}
	if ok, err := s.AlertEndpoint(ctx, a); !ok || err != nil {
		t.Fatalf("AlertEndpoint = %v, %v", ok, err)
	}
	s.Close()
	hooks := fmt.Sprintf("webhooks: [{name: crm, url: %q, secret: %q, allow_private: true}, {name: erp, url: %q, secret: %q, allow_private: true}]\n",
		rx.URL, receiverSecret, rx.URL, receiverSecret)
	r, code := doctorJSON(t, dir, localConfig(t, dir, db, hooks))
	if code != 0 {
		t.Errorf("doctor exit %d, want 0 (a failing endpoint is a warning): %+v", code, r.Items)
	}
	c := r.find(t, checkWarn, "webhook crm")
	if !strings.Contains(c.Detail, "failing for 1h12m: answered 503") || !strings.Contains(c.Fix, "bridge deliveries replay --endpoint crm --since "+since.UTC().Format(time.RFC3339)) {
		t.Errorf("doctor on a failing endpoint = %+v; want failing for 1h12m: answered 503, and the replay since %s", c, since.UTC().Format(time.RFC3339))
	}
	for _, it := range r.Items {
		if it.Check == "webhook erp" && it.Status == checkWarn {
			t.Errorf("doctor warns of erp, not failing: %+v", it)
		}
	}

	cfg := filepath.Join(dir, "bridge.yaml")
	var out, errb bytes.Buffer
	if code := Run(ctx, []string{"endpoints", "list", "--config", cfg}, &out, &errb); code != 0 {
		t.Fatalf("endpoints list: exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"failing for 1h12m: answered 503", "erp"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("endpoints list = %q, want it to contain %q", out.String(), want)
		}
	}
	out.Reset()
	if code := Run(ctx, []string{"endpoints", "list", "--config", cfg, "-o", "json"}, &out, &errb); code != 0 {
		t.Fatalf("endpoints list -o json: exit %d: %s", code, errb.String())
	}
	var list struct{ Items []endpointView }
	if err := json.Unmarshal(out.Bytes(), &list); err != nil || len(list.Items) != 2 {
		t.Fatalf("endpoints list -o json = %s, %v", out.String(), err)
	}
	if v := list.Items[0]; v.State != bridge.EndpointFailing || v.FailingSince == nil || v.FailingError != "answered 503" || list.Items[1].State != bridge.EndpointEnabled {
		t.Errorf("endpoints list -o json = %+v; want crm failing since %s (answered 503), erp enabled", list.Items, since)
	}
}
