package bridge_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/bridge/sqlite/bus"
	"github.com/transcript-bridge/bridge/bridge/tracing"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// TestRecordingIsOneTrace (issue 33, point 3): with tracing on, a recording's spans (its
// discovery, upload, tracking (with its reports when they came with the transcript; a reports
// span when they were asked for after it) and the delivery attempts of its events, the failed
// one and the accepted one) form one trace whose id is the job's, each a child of the recording's
// root span; the receiver gets a traceparent naming that trace and the attempt's span, so it
// can continue it; no attribute holds a secret.
func TestRecordingIsOneTrace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tracing.Install(tracing.NewProvider(rec, sdktrace.AlwaysSample(), true, nil), nil)
	defer tracing.Install(nil, nil)

	e := newEnv(t, []string{"summary"})
	secret, _ := webhook.NewSecret()
	var mu sync.Mutex
	var parents []string
	answers := 0
	rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		parents = append(parents, r.Header.Get("traceparent"))
		if answers++; answers == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable) // the first attempt fails
		}
	}))
	defer rx.Close()
	ep, err := relay.NewEndpoint(relay.EndpointConfig{Name: "crm", URL: rx.URL, Secrets: []webhook.Secret{secret}, AllowPrivate: true,
		Events: []string{bridge.EventCompleted}, RetrySchedule: []time.Duration{time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	sub, poison, err := e.store.Bus(bus.SubscriberConfig{PollInterval: 5 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	rl := &relay.Relay{Store: e.store, Bus: sub, Poison: poison, Endpoints: []*relay.Endpoint{ep}, API: e.api}
	var logs syncBuf
	e.p.Log = slog.New(slog.NewJSONHandler(&logs, nil))
	rl.Log = e.p.Log
	e.put(t, "a.wav", wav(8, 1))
	e.run(t)
	for range 50 {
		if err := rl.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		n := answers
		mu.Unlock()
		if n >= 2 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	j := e.onlyJob(t)
	if j.State != bridge.StateDone {
		t.Fatalf("job %s (%q), want done", j.State, j.Reason)
	}

	want := tracing.TraceID(j.ID)
	// Every JSON log line about the job names its trace.
	lines := 0
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, `"job_id":"`+j.ID+`"`) {
			lines++
			if !strings.Contains(l, `"trace_id":"`+want+`"`) {
				t.Errorf("log line without the job's trace_id %s: %s", want, l)
			}
		}
	}
	if lines == 0 {
		t.Errorf("no JSON log line names job %s:\n%s", j.ID, logs.String())
	}
	var root trace.SpanID
	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		if s.SpanContext().TraceID().String() != want {
			t.Errorf("span %s is in trace %s, want the job's %s", s.Name(), s.SpanContext().TraceID(), want)
			continue
		}
		byName[s.Name()] = append(byName[s.Name()], s)
		if s.Name() == "recording.discovered" {
			root = s.SpanContext().SpanID()
		}
		for _, a := range s.Attributes() {
			if v := a.Value.String(); strings.Contains(v, sandboxtest.OwnerKey) || strings.Contains(v, secret.Encode()) || strings.Contains(v, "whsec_") {
				t.Errorf("span %s has attribute %s = %q: a secret", s.Name(), a.Key, v)
			}
		}
	}
	stages := []string{"recording.discovered", "recording.upload", "recording.track", "webhook.deliver"}
	hist, _ := e.store.History(context.Background(), j.ID)
	for _, c := range hist {
		if c.To == bridge.StateTranscribed && c.Reason != "transcript ready" { // reports asked for after the transcript
			stages = append(stages, "recording.reports")
			break
		}
	}
	for _, name := range stages {
		if len(byName[name]) == 0 {
			t.Errorf("no %s span in the job's trace (spans: %v)", name, keys(byName))
		}
	}
	if !root.IsValid() {
		t.Fatal("no root span")
	}
	for name, spans := range byName {
		for _, s := range spans {
			if name != "recording.discovered" && s.Parent().SpanID() != root {
				t.Errorf("span %s's parent is %s, want the recording's root %s", name, s.Parent().SpanID(), root)
			}
		}
	}
	// Two attempts: the 503, then the accepted one, each with its status; the receiver saw each
	// attempt's own span as its parent.
	deliveries := byName["webhook.deliver"]
	if len(deliveries) != 2 || len(parents) != 2 {
		t.Fatalf("%d delivery spans, %d requests received; want 2 of each", len(deliveries), len(parents))
	}
	for i, s := range deliveries {
		status := attr(s, tracing.HTTPStatus)
		if wantStatus := []string{"503", "200"}[i]; status != wantStatus {
			t.Errorf("attempt %d's span has status %q, want %s", i+1, status, wantStatus)
		}
		if tp := "00-" + want + "-" + s.SpanContext().SpanID().String() + "-01"; parents[i] != tp {
			t.Errorf("attempt %d's traceparent = %q, want %q", i+1, parents[i], tp)
		}
		if attr(s, tracing.Endpoint) != "crm" || attr(s, tracing.JobID) != j.ID {
			t.Errorf("attempt %d's span attributes = %v", i+1, s.Attributes())
		}
	}
}

// syncBuf is a buffer two goroutines may write and read.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// attr returns the value of span s's attribute k, "" when it has none.
func attr(s sdktrace.ReadOnlySpan, k attribute.Key) string {
	for _, a := range s.Attributes() {
		if a.Key == k {
			return a.Value.String()
		}
	}
	return ""
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
