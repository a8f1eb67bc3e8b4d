package mapping_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/mapping"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// TestPlanAndApplyAgainstTheSandbox: 1,000 members; external users matched by the map and by
// e-mail, one already bound, one invalid, one mapped to someone who left, one that another
// binding takes between plan and apply (a conflict, left alone), and a stale binding pruned.
func TestPlanAndApplyAgainstTheSandbox(t *testing.T) {
	sb := sandboxtest.Start(t, func(o *sandbox.Options) {
		ws := &o.Seed.Workspaces[0]
		for i := range 998 {
			ws.Members = append(ws.Members, sandbox.SeedMember{Email: fmt.Sprintf("m%03d@acme.test", i), Role: "user"})
		}
		ws.Members[1].Identities = append(ws.Members[1].Identities, sandbox.SeedIdentity{Provider: "zoom", ExternalID: "u-old"})
	})
	ctx := context.Background()
	c, _ := api.New(api.Config{BaseURL: sb.URL, Key: sandboxtest.OwnerKey})
	members, err := c.Members(ctx)
	if err != nil || len(members) != 1000 {
		t.Fatalf("members = %d, %v; want 1000", len(members), err)
	}
	m, err := mapping.New("zoom", "zoom", "i", mapping.Rules{Provider: "zoom", Map: map[string]string{
		"u-map":    "email:m010@acme.test",
		"u-left":   "email:gone@acme.test",
		"u-racy":   "email:m020@acme.test",
		"u-1":      "email:sam@acme.test",
		"U-Mail@X": "email:m030@acme.test",
	}})
	if err != nil {
		t.Fatal(err)
	}
	owners := []connectors.Owner{
		{Provider: "zoom", ID: "u-1"},                                // Sam holds zoom:u-1 already
		{Provider: "zoom", ID: "u-mail", Email: "M005@acme.test"},    // by e-mail
		{Provider: "zoom", ID: "u-bad\x01", Email: "m006@acme.test"}, // not printable ASCII
		{Provider: "zoom", ID: "u-nobody", Email: "nobody@elsewhere.test"},
	}
	plan, err := m.Plan(ctx, c, owners, true)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, a := range plan {
		got[a.Identity.ExternalID] = a.Kind + " " + a.MemberMail
	}
	want := map[string]string{
		"u-1": "bound sam@acme.test", "u-mail": "bind m005@acme.test", "u-bad\x01": "invalid ", "u-nobody": "unmatched ",
		"u-map": "bind m010@acme.test", "u-left": "missing ", "u-racy": "bind m020@acme.test", "u-old": "prune sam@acme.test",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("plan[%q] = %q, want %q", k, got[k], w)
		}
	}
	// Someone binds u-racy to another member between plan and apply.
	if _, err := c.PutIdentity(ctx, sandboxtest.OwnerID, api.Identity{Provider: "zoom", ExternalID: "u-racy"}); err != nil {
		t.Fatal(err)
	}
	res, err := mapping.Apply(ctx, c, plan)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	outcome := map[string]string{}
	for _, r := range res {
		outcome[r.Identity.ExternalID] = strings.SplitN(r.Outcome, ":", 2)[0]
	}
	if fmt.Sprint(outcome) != "map[u-mail:created u-map:created u-old:removed u-racy:conflict]" {
		t.Errorf("outcomes = %v", outcome)
	}
	members, _ = c.Members(ctx)
	var bound []string
	for _, mem := range members {
		for _, id := range mem.Identities {
			bound = append(bound, id.ExternalID+"="+mem.Email)
		}
	}
	sort.Strings(bound)
	if g := strings.Join(bound, " "); g != "u-1=sam@acme.test u-mail=m005@acme.test u-map=m010@acme.test u-racy=owner@acme.test" {
		t.Errorf("bindings after apply = %s", g)
	}
	// Applying again changes nothing.
	plan, _ = m.Plan(ctx, c, owners, false)
	if res, _ := mapping.Apply(ctx, c, plan); len(res) != 0 {
		t.Errorf("a second apply acted: %+v", res)
	}
}
