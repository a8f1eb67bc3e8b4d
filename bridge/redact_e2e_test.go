package bridge_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"encoding/json"

	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/bridge/sqlite/bus"
)

// bodies is a receiver keeping the signed bodies it gets.
type bodies struct {
	t      *testing.T
	secret webhook.Secret
	mu     sync.Mutex
	got    []string
}

func (rx *bodies) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if err := webhook.Verify(r.Header, body, time.Now(), 0, rx.secret); err != nil {
		rx.t.Errorf("bad signature: %v", err)
	}
	rx.mu.Lock()
	rx.got = append(rx.got, string(body))
	rx.mu.Unlock()
}

// personalData finds what the sandbox puts into transcripts (sandbox/personal.go).
var personalData = map[string]*regexp.Regexp{
	"email": regexp.MustCompile(`[a-z]+\.[0-9]+@example\.com`),
	"phone": regexp.MustCompile(`\+1 201-555-01[0-9]{2}`),
	"card":  regexp.MustCompile(`4[0-9]{3}( [0-9]{4}){3}`),
	"iban":  regexp.MustCompile(`DE[0-9]{2}( [0-9]{4}){4} [0-9]{2}`),
	"ip":    regexp.MustCompile(`192\.0\.2\.[0-9]+|2001:db8::[0-9a-f]+`),
}

// TestRedactionPerEndpoint runs recordings through the pipeline to two endpoints in the same
// run: the one that redacts receives the transcription without the sandbox's personal data,
// each of it replaced by its kind and counted in the data's redactions, ordinary numbers kept;
// the other receives it whole.
func TestRedactionPerEndpoint(t *testing.T) {
	e := newEnv(t, []string{"summary"})
	plain := &bodies{t: t}
	redacting := &bodies{t: t}
	plain.secret, _ = webhook.NewSecret()
	redacting.secret, _ = webhook.NewSecret()
	var eps []*relay.Endpoint
	for _, c := range []struct {
		name   string
		rx     *bodies
		redact []string
	}{{"plain", plain, nil}, {"private", redacting, []string{"email", "phone", "card", "iban", "ip"}}} {
		srv := httptest.NewServer(c.rx)
		defer srv.Close()
		ep, err := relay.NewEndpoint(relay.EndpointConfig{Name: c.name, URL: srv.URL, Secrets: []webhook.Secret{c.rx.secret},
			AllowPrivate: true, Events: []string{"transcription.completed"}, Redact: c.redact, DefaultRegion: "US"})
		if err != nil {
			t.Fatal(err)
		}
		eps = append(eps, ep)
	}
	sub, poison, err := e.store.Bus(bus.SubscriberConfig{PollInterval: 5 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	rl := &relay.Relay{Store: e.store, Bus: sub, Poison: poison, Endpoints: eps, API: e.api}
	e.put(t, "a.wav", wav(60, 1))
	e.put(t, "b.wav", wav(45, 2))
	e.run(t)
	if err := rl.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(plain.got) != 2 || len(redacting.got) != 2 {
		t.Fatalf("received %d and %d webhooks, want 2 each", len(plain.got), len(redacting.got))
	}
	checkPlain(t, strings.Join(plain.got, "\n"))
	for _, body := range redacting.got {
		checkRedacted(t, body)
	}
}

// checkPlain checks that the non-redacting endpoint got every kind of personal data, and no
// redactions.
func checkPlain(t *testing.T, all string) {
	t.Helper()
	for kind, re := range personalData {
		if !re.MatchString(all) {
			t.Errorf("the plain endpoint received no %s: %.400s", kind, all)
		}
	}
	if strings.Contains(all, `"redactions"`) || strings.Contains(all, "[email]") {
		t.Errorf("the plain endpoint received redactions: %.400s", all)
	}
}

// checkRedacted checks one body of the redacting endpoint: no personal data left, its markers
// counted in redactions, the ordinary numbers next to them kept.
func checkRedacted(t *testing.T, body string) {
	t.Helper()
	for kind, re := range personalData {
		if m := re.FindString(body); m != "" {
			t.Errorf("the redacting endpoint received the %s %q", kind, m)
		}
	}
	var msg struct {
		Data struct {
			Redactions    map[string]int `json:"redactions"`
			Transcription struct {
				Text     string `json:"text"`
				Segments []struct {
					Text string `json:"text"`
				} `json:"segments"`
				Reports []struct {
					Text string `json:"text"`
				} `json:"prompt_results"`
			} `json:"transcription"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &msg); err != nil {
		t.Fatal(err)
	}
	tr := msg.Data.Transcription
	texts := tr.Text
	for _, s := range tr.Segments {
		texts += "\n" + s.Text
	}
	for _, r := range tr.Reports {
		texts += "\n" + r.Text
	}
	if len(tr.Reports) != 1 || !strings.Contains(tr.Reports[0].Text, "Questions go to [email].") {
		t.Errorf("reports = %+v, want one ending with a redacted address", tr.Reports)
	}
	total := 0
	for kind, n := range msg.Data.Redactions {
		if got := strings.Count(texts, "["+kind+"]"); got != n {
			t.Errorf("redactions[%s] = %d, want %d (markers in the texts)", kind, n, got)
		}
		total += n
	}
	if total == 0 || len(msg.Data.Redactions) < 3 {
		t.Errorf("redactions = %v, want several kinds", msg.Data.Redactions)
	}
	for marker, want := range map[string]string{"order number": "order number 1234567.", "and we are": "and we are 12 people",
		"expiring": "expiring 2027", "went down at": "went down at 10:30"} {
		if strings.Count(texts, marker) != strings.Count(texts, want) {
			t.Errorf("the ordinary %q did not survive: %.600s", want, tr.Text)
		}
	}
}
