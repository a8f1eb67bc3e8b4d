package teams_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/teams"
	"github.com/transcript-bridge/bridge/connectors/teams/teamstest"
)

const clientState = "c1ient-state-of-the-bridge"

// pushed is a source with notifications, its handler served on loopback, and what its intake
// received.
type pushed struct {
	src  *teams.PushSource
	url  string
	mu   sync.Mutex
	got  []connectors.Recording
	fail error // intake's answer
}

func (p *pushed) recordings() []connectors.Recording {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]connectors.Recording{}, p.got...)
}

// newPushed serves a push source of the fake's app (clock: the real one, as the fake's).
func newPushed(t testing.TB, fake *teamstest.Server, c teams.Config) *pushed {
	t.Helper()
	p := &pushed{}
	var h http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	c.Name, c.ClientState, c.SubscribeRetry, c.Now = "teams", clientState, 50*time.Millisecond, time.Now
	c.Notifications = map[string]string{"public_url": srv.URL}
	p.src = newSource(t, fake, c).Push()
	p.url = srv.URL + "/hooks/teams/teams"
	h = p.src.Handler(func(_ context.Context, recs []connectors.Recording) error {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.fail != nil {
			return p.fail
		}
		p.got = append(p.got, recs...)
		return nil
	})
	return p
}

// subscribe runs Subscribe until the test ends and waits for the subscription.
func (p *pushed) subscribe(t *testing.T, fake *teamstest.Server) teamstest.Subscription {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.src.Subscribe(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return waitFor(t, "a subscription", func() (teamstest.Subscription, bool) {
		subs := fake.Subscriptions()
		if len(subs) == 1 {
			return subs[0], true
		}
		return teamstest.Subscription{}, false
	})
}

func waitFor[T any](t *testing.T, what string, f func() (T, bool)) T {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if v, ok := f(); ok {
			return v
		}
	}
	t.Fatalf("no %s after 10s", what)
	panic("unreachable")
}

func post(t *testing.T, url, body string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestValidationHandshake: a validation request is answered 200 with the token, decoded, as
// text/plain.
func TestValidationHandshake(t *testing.T) {
	p := newPushed(t, teamstest.Start(t), teams.Config{})
	resp, body := post(t, p.url+"?validationToken=Validation%3A%20Testing%20%3Cb%3Ehi%3C%2Fb%3E", "")
	if resp.StatusCode != 200 || body != "Validation: Testing <b>hi</b>" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("validation = %d %q (%s), want 200 with the token as text/plain", resp.StatusCode, body, resp.Header.Get("Content-Type"))
	}
}

// TestNotifications: Subscribe makes the subscription (the fake validates the URL); a
// notification with the clientState is answered 202 and becomes a recording through intake,
// the same item and version the sweep lists; a forged one is refused and takes nothing.
func TestNotifications(t *testing.T) {
	fake := teamstest.Start(t)
	sam := fake.AddUser("", "Sam Lee", "sam@acme.test")
	p := newPushed(t, fake, teams.Config{})
	sub := p.subscribe(t, fake)
	if sub.Resource != "communications/onlineMeetings/getAllRecordings" || sub.NotificationURL != p.url || sub.LifecycleNotificationURL != p.url ||
		time.Until(sub.ExpirationDateTime) < 4229*time.Minute {
		t.Errorf("subscription = %+v, want getAllRecordings at %s for 4230 minutes, with lifecycle notifications", sub, p.url)
	}
	rec := fake.AddRecording(sam.ID, time.Now().Add(-time.Hour), []byte("audio"))
	forged := teamstest.ChangeNotification(sub.ID, "not-the-state", sub.ExpirationDateTime, rec)
	if resp, _ := post(t, p.url, string(forged)); resp.StatusCode != http.StatusUnauthorized || len(p.recordings()) != 0 {
		t.Errorf("forged notification = %d with %d recordings, want 401 and none", resp.StatusCode, len(p.recordings()))
	}
	if codes := fake.Notify(rec); len(codes) != 1 || codes[0] != http.StatusAccepted {
		t.Fatalf("notification answered %v, want 202", codes)
	}
	got := waitFor(t, "the notified recording", func() ([]connectors.Recording, bool) { r := p.recordings(); return r, len(r) > 0 })
	swept, _ := list(t, p.src, "")
	if len(got) != 1 || len(swept) != 1 || got[0].ItemID != swept[0].ItemID || got[0].Version != swept[0].Version ||
		got[0].SourceExternalID != swept[0].SourceExternalID || got[0].Owner == nil || *got[0].Owner != *swept[0].Owner {
		t.Errorf("pushed %+v, swept %+v; want the same recording", got, swept)
	}
}

// TestNotificationsOutOfScope: with a list of organizers, a recording of another organizer,
// or one Graph refuses, is answered 202 and left alone.
func TestNotificationsOutOfScope(t *testing.T) {
	fake := teamstest.Start(t)
	sam := fake.AddUser("", "Sam Lee", "sam@acme.test")
	kim := fake.AddUser("", "Kim Park", "kim@acme.test")
	p := newPushed(t, fake, teams.Config{Organizers: []string{"sam@acme.test"}})
	p.subscribe(t, fake)
	if codes := fake.Notify(fake.AddRecording(kim.ID, time.Now(), []byte("x"))); len(codes) != 1 || codes[0] != 202 || len(p.recordings()) != 0 {
		t.Errorf("notification of another organizer = %v with %d recordings, want 202 and none", codes, len(p.recordings()))
	}
	fake.Notify(fake.AddRecording(sam.ID, time.Now(), []byte("y"))) // queued after Kim's: read once Kim's was left
	waitFor(t, "Sam's notified recording", func() (int, bool) { return 0, len(p.recordings()) == 1 })
	if got := p.recordings(); len(got) != 1 || got[0].Owner.Email != "sam@acme.test" {
		t.Errorf("recordings taken = %+v, want Sam's only", got)
	}
}

// TestLifecycle: reauthorizationRequired renews the subscription; subscriptionRemoved makes a
// new one; a subscription Graph no longer has is made again.
func TestLifecycle(t *testing.T) {
	fake := teamstest.Start(t)
	fake.AddUser("", "Sam Lee", "sam@acme.test")
	p := newPushed(t, fake, teams.Config{})
	sub := p.subscribe(t, fake)
	if code := fake.Lifecycle(sub.ID, "reauthorizationRequired"); code != http.StatusAccepted {
		t.Errorf("reauthorizationRequired answered %d, want 202", code)
	}
	waitFor(t, "renewal", func() (int, bool) { s := fake.Subscriptions(); return 0, len(s) == 1 && s[0].Renewals == 1 })
	if code := fake.Lifecycle(sub.ID, "subscriptionRemoved"); code != http.StatusAccepted {
		t.Errorf("subscriptionRemoved answered %d, want 202", code)
	}
	again := waitFor(t, "a new subscription", func() (teamstest.Subscription, bool) {
		if s := fake.Subscriptions(); len(s) == 1 && s[0].ID != sub.ID {
			return s[0], true
		}
		return teamstest.Subscription{}, false
	})
	if code := fake.Lifecycle(again.ID, "missed"); code != http.StatusAccepted {
		t.Errorf("missed answered %d, want 202", code)
	}
}

// TestRenewal: a subscription is renewed when a third of its life is left; when Graph refuses
// the life asked (over an hour), an hour is asked.
func TestRenewal(t *testing.T) {
	fake := teamstest.Start(t)
	fake.AddUser("", "Sam Lee", "sam@acme.test")
	p := newPushed(t, fake, teams.Config{SubscriptionLifetime: 3 * time.Second})
	p.subscribe(t, fake)
	waitFor(t, "renewals", func() (int, bool) { s := fake.Subscriptions(); return 0, len(s) == 1 && s[0].Renewals >= 2 })

	fake2 := teamstest.Start(t)
	fake2.MaxLifetime = time.Hour
	fake2.AddUser("", "Sam Lee", "sam@acme.test")
	sub := newPushed(t, fake2, teams.Config{}).subscribe(t, fake2)
	if left := time.Until(sub.ExpirationDateTime); left > time.Hour || left < 58*time.Minute {
		t.Errorf("with Graph taking at most an hour, the subscription lives %v, want about 59 minutes", left)
	}
}

// TestSubscribeTakesOver: a second run (or replica) finds the subscription to the same URL and
// keeps it rather than making another.
func TestSubscribeTakesOver(t *testing.T) {
	fake := teamstest.Start(t)
	fake.AddUser("", "Sam Lee", "sam@acme.test")
	p := newPushed(t, fake, teams.Config{})
	first := p.subscribe(t, fake)
	restarted := newSource(t, fake, teams.Config{Name: "teams", ClientState: clientState, Now: time.Now,
		Notifications: map[string]string{"public_url": strings.TrimSuffix(p.url, "/hooks/teams/teams")}}).Push()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	restarted.Subscribe(ctx) // the same URL: a restart, or another replica
	if subs := fake.Subscriptions(); len(subs) != 1 || subs[0].ID != first.ID {
		t.Errorf("after a second Subscribe, subscriptions = %+v, want the first one only", subs)
	}
}
