package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/bridge/server/status"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/bridge/sqlite/bus"
	"github.com/transcript-bridge/bridge/connectors"
)

// goneRig is a store whose relay has sent to two receivers: crm answers 410 Gone to
// everything, erp takes everything. Its jobs were all found in one scan (ids alike but for
// their tails).
type goneRig struct {
	store *sqlite.Store
	jobs  []bridge.Job
	base  string // the status page, on loopback without a token
}

func startGoneRig(t *testing.T) *goneRig {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "bridge.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	var eps []*relay.Endpoint
	var pages []status.Endpoint
	for name, code := range map[string]int{"crm": http.StatusGone, "erp": http.StatusOK} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }))
		t.Cleanup(srv.Close)
		s, _ := webhook.NewSecret()
		ep, err := relay.NewEndpoint(relay.EndpointConfig{Name: name, URL: srv.URL, Secrets: []webhook.Secret{s}, AllowPrivate: true, Payload: relay.PayloadThin})
		if err != nil {
			t.Fatal(err)
		}
		eps, pages = append(eps, ep), append(pages, status.Endpoint{Name: name, URL: srv.URL})
	}
	sub, poison, err := store.Bus(bus.SubscriberConfig{PollInterval: 5 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Close() })
	r := &relay.Relay{Store: store, Endpoints: eps, Bus: sub, Poison: poison}
	rig := &goneRig{store: store}
	names := []string{"Quarterly review.mp4", "Standup.wav", "All hands.m4a"}
	for i := range 12 {
		names = append(names, fmt.Sprintf("Daily %02d.wav", i+1))
	}
	var recs []connectors.Recording
	for i, n := range names {
		recs = append(recs, connectors.Recording{ItemID: fmt.Sprint("item-", i), Version: "1", Name: n, Size: 4096})
	}
	if rig.jobs, err = store.AddRecordings(ctx, "inbox", recs, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	for i := range rig.jobs {
		j := &rig.jobs[i]
		j.State, j.UpdatedAt = bridge.StateQueued, time.Now()
		if err := store.Update(ctx, j, bridge.StateDiscovered, "uploaded", bridge.NewEvent(bridge.EventUploaded, j, nil)); err != nil {
			t.Fatal(err)
		}
		if i == 3 { // the first four go out at once and meet the 410; the rest wait on crm, untried
			if err := r.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	page, err := status.New(status.Options{Store: store, Loopback: true, Sources: []string{"inbox"}, Endpoints: pages})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	page.Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	rig.base = srv.URL
	return rig
}

// TestEndpointsAndIdsInBrowser: in headless Chromium, the Endpoints page shows an endpoint
// disabled by a 410, whose newest deliveries all wait untried, with its 410 attempt, its last
// error and "disabled: answered 410 Gone"; the Jobs page lists jobs found in the same minute
// by file name and their ids' distinct tails, and its search finds one by a part of its name.
// Screenshots are kept as the test's artefacts.
func TestEndpointsAndIdsInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a browser")
	}
	bctx := newBrowser(t)
	rig := startGoneRig(t)
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }

	browse(t, bctx, 30*time.Second, "the Endpoints page", chromedp.Navigate(rig.base+"/endpoints"), chromedp.WaitVisible(css(`#endpoint-crm`)))
	crm := textOf(t, bctx, `#endpoint-crm`)
	for _, want := range []string{"disabled: answered 410 Gone", "Last error", "410 Gone", "Resume"} {
		if !strings.Contains(crm, want) {
			t.Errorf("crm's card lacks %q:\n%s", want, crm)
		}
	}
	if strings.Contains(crm, "No attempt yet.") {
		t.Errorf("crm's card says No attempt yet. though it answered 410:\n%s", crm)
	}
	if erp := textOf(t, bctx, `#endpoint-erp`); !strings.Contains(erp, "enabled") || strings.Contains(erp, "No attempt yet.") {
		t.Errorf("erp's card:\n%s\nwant enabled, with its attempts", erp)
	}
	screenshot(t, bctx, "status-endpoints-410.png")

	if a, b := rig.jobs[0].ID, rig.jobs[1].ID; a[:8] != b[:8] {
		t.Fatalf("job ids %s and %s, made at once, begin differently: the premise of this test is gone", a, b)
	}
	browse(t, bctx, 30*time.Second, "the Jobs page", chromedp.Navigate(rig.base+"/jobs"), chromedp.WaitVisible(css(`table.jobs`)))
	for _, j := range rig.jobs[:3] {
		row := textOf(t, bctx, `#job-`+j.ID+` td.recording`)
		if tail := j.ID[len(j.ID)-12:]; !strings.Contains(row, j.Name) || !strings.Contains(row, tail) {
			t.Errorf("the row of job %s reads %q, want its file %q and its id's tail %s", j.ID, row, j.Name, tail)
		}
	}
	screenshot(t, bctx, "status-jobs-same-minute.png")
	browse(t, bctx, 30*time.Second, "search Quarterly", chromedp.SendKeys(css(`input[name=q]`), "Quarterly"), chromedp.Submit(css(`input[name=q]`)))
	awaitValue(t, 20*time.Second, "the search's page", func() string {
		cctx, cancel := context.WithTimeout(bctx, 5*time.Second)
		defer cancel()
		loc, _ := chromedp.Run(cctx, chromedp.Location())
		return loc
	}, func(loc string) bool { return strings.Contains(loc, "q=Quarterly") })
	browse(t, bctx, 20*time.Second, "the search's results", chromedp.WaitReady(css(`#job-`+rig.jobs[0].ID)))
	if table := textOf(t, bctx, `table.jobs tbody`); !strings.Contains(table, "Quarterly review.mp4") || strings.Contains(table, "Standup.wav") {
		t.Errorf("the search for Quarterly lists:\n%s\nwant Quarterly review.mp4 alone", table)
	}
	screenshot(t, bctx, "status-jobs-search.png")

	ds, err := rig.store.Deliveries(context.Background(), bridge.DeliveryFilter{Endpoint: "crm", Status: bridge.DeliveryDead})
	if err != nil || len(ds) == 0 {
		t.Fatalf("crm's dead letters = %v, %v", ds, err)
	}
	d := ds[0]
	browse(t, bctx, 30*time.Second, "the dead letters", chromedp.Navigate(rig.base+"/deliveries?status=dead"), chromedp.WaitVisible(css(`#delivery-`+d.ID)))
	name := ""
	for _, j := range rig.jobs {
		if j.ID == d.JobID {
			name = j.Name
		}
	}
	if row := textOf(t, bctx, `#delivery-`+d.ID); !strings.Contains(row, d.ID[len(d.ID)-12:]) || name == "" || !strings.Contains(row, name) {
		t.Errorf("the dead letter %s reads %q, want its id's tail and its job's file %q", d.ID, row, name)
	}
	screenshot(t, bctx, "status-dead-letters-named.png")
}
