package status

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/connectors"
)

// t0 is the tests' clock start.
var t0 = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

const testToken = "s3cret-admin-token-for-tests"

// fakeAPI counts its calls.
type fakeAPI struct {
	workspace, members atomic.Int32
}

func (f *fakeAPI) Workspace(context.Context) (*api.Workspace, error) {
	f.workspace.Add(1)
	w := &api.Workspace{}
	w.Workspace.Name = "Acme"
	w.Balance.AvailableMinutes = 123.5
	return w, nil
}

func (f *fakeAPI) Members(context.Context) ([]api.Member, error) {
	f.members.Add(1)
	sam := "Sam"
	return []api.Member{{ID: "m-sam", Email: "sam@acme.test", Name: &sam}, {ID: "m-owner", Email: "owner@acme.test"}}, nil
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// rig is a page on a test server over a fresh SQLite store.
type rig struct {
	store  *sqlite.Store
	api    *fakeAPI
	clock  *clock
	page   *Page
	srv    *httptest.Server
	client *http.Client
}

// newRig starts a page with opts changed by edit (Token testToken, on loopback, endpoint crm).
func newRig(t testing.TB, edit func(o *Options)) *rig {
	t.Helper()
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "bridge.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	rg := &rig{store: store, api: &fakeAPI{}, clock: &clock{now: t0}}
	o := Options{Store: store, API: rg.api, Token: testToken, Loopback: true, Sources: []string{"inbox"},
		Endpoints: []Endpoint{{Name: "crm", URL: "https://crm.example/hook"}}, Now: rg.clock.Now, RateLimit: "500 requests/min"}
	if edit != nil {
		edit(&o)
	}
	if rg.page, err = New(o); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	rg.page.Mount(mux)
	rg.srv = httptest.NewServer(mux)
	t.Cleanup(rg.srv.Close)
	rg.client = newClient(t)
	return rg
}

// newClient is a browser-like client: it keeps cookies and does not follow redirects.
func newClient(t testing.TB) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// get fetches path and returns the status and body.
func (rg *rig) get(t testing.TB, c *http.Client, path string) (int, string) {
	t.Helper()
	res, err := c.Get(rg.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// post sends form to path and returns the answer (its body read into the returned string).
func (rg *rig) post(t testing.TB, c *http.Client, path string, form url.Values) (*http.Response, string) {
	t.Helper()
	res, err := c.PostForm(rg.srv.URL+path, form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// login signs c in and returns the CSRF token of its session.
func (rg *rig) login(t testing.TB, c *http.Client) string {
	t.Helper()
	res, body := rg.post(t, c, "/login", url.Values{"token": {testToken}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
		t.Fatalf("POST /login with the token = %d → %q\n%s", res.StatusCode, res.Header.Get("Location"), body)
	}
	_, page := rg.get(t, c, "/")
	return csrfOf(t, page)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrfOf returns the CSRF token of a page's forms.
func csrfOf(t testing.TB, page string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token in the page:\n%s", page)
	}
	return m[1]
}

// heldJob stores a job of item held as unmapped, and returns it.
func (rg *rig) heldJob(t testing.TB, item string) bridge.Job {
	t.Helper()
	ctx := context.Background()
	jobs, err := rg.store.AddRecordings(ctx, "inbox", []connectors.Recording{{ItemID: item, Version: "1", Name: item, Size: 4096,
		Owner: &connectors.Owner{Provider: "localdir", ID: "u-stranger"}}}, "", t0)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("AddRecordings = %v, %v", jobs, err)
	}
	j := jobs[0]
	j.State, j.Hold, j.Reason, j.UpdatedAt = bridge.StateHeld, bridge.HoldUnmapped, "unmapped: no member matches the owner localdir:u-stranger", t0
	if err := rg.store.Update(ctx, &j, bridge.StateDiscovered, j.Reason); err != nil {
		t.Fatal(err)
	}
	return j
}

// deadDelivery gives job j an event delivered to endpoint, dead after one 410, and returns
// the delivery.
func (rg *rig) deadDelivery(t *testing.T, j *bridge.Job, endpoint string) bridge.Delivery {
	t.Helper()
	ctx := context.Background()
	from := j.State
	j.UpdatedAt = t0.Add(time.Second)
	if err := rg.store.Update(ctx, j, from, "", bridge.Event{Type: bridge.EventHeld, JobID: j.ID, Data: json.RawMessage(`{"a":1}`)}); err != nil {
		t.Fatal(err)
	}
	pending, err := rg.store.PendingEvents(ctx, 10)
	if err != nil || len(pending) == 0 {
		t.Fatalf("PendingEvents = %v, %v", pending, err)
	}
	e := pending[len(pending)-1]
	if err := rg.store.FanOut(ctx, bridge.EventRef{EventID: e.ID, Type: e.Type, JobID: e.JobID}, []string{endpoint}, t0); err != nil {
		t.Fatal(err)
	}
	claimed, err := rg.store.Claim(ctx, endpoint, t0.Add(time.Second), time.Minute, 1)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("Claim = %v, %v", claimed, err)
	}
	d := claimed[0]
	at := t0.Add(2 * time.Second)
	d.Status, d.Attempts, d.LastStatus, d.LastError, d.UpdatedAt = bridge.DeliveryDead, 1, 410, "410 Gone", at
	if err := rg.store.Record(ctx, &d, bridge.Attempt{At: at, Status: 410, Latency: 3, Error: "410 Gone"}); err != nil {
		t.Fatal(err)
	}
	return d
}

// contains fails t unless body has every one of want.
func contains(t *testing.T, what, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
}
