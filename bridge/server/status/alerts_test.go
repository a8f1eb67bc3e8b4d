package status

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

// TestFailingEndpointBanner: an endpoint marked failing for its alert_after shows a banner on
// the overview, naming the replay that sends what it missed; none once it recovered.
func TestFailingEndpointBanner(t *testing.T) {
	rg := newRig(t, nil)
	ctx := context.Background()
	since := t0.Add(-2 * time.Hour)
	if _, err := rg.store.AlertEndpoint(ctx, bridge.EndpointAlert{Name: "crm", Since: since, AlertedAt: t0.Add(-time.Hour),
		Error: "answered 503"}); err != nil {
		t.Fatal(err)
	}
	rg.login(t, rg.client)
	_, page := rg.get(t, rg.client, "/")
	contains(t, "the overview", page, `class="banner endpoint-failing"`, "Endpoint <a href=\"/deliveries?endpoint=crm\">crm</a> has been failing",
		"(answered 503)", "bridge deliveries replay --endpoint crm --since "+since.UTC().Format(time.RFC3339)+" --missed")
	rg.store.EndpointRecovered(ctx, "crm")
	if _, page = rg.get(t, rg.client, "/"); strings.Contains(page, "endpoint-failing") {
		t.Error("the overview still shows the banner after the endpoint recovered")
	}
}
