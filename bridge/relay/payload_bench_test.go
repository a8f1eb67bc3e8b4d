package relay

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
)

// answer200 is a transport that answers 200 at once without a network, so a benchmark of Send
// measures what the relay does per attempt, not loopback.
type answer200 struct{}

func (answer200) RoundTrip(r *http.Request) (*http.Response, error) {
	io.Copy(io.Discard, r.Body)
	r.Body.Close()
	return &http.Response{StatusCode: 200, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
}

// benchRecord is a transcription of 40 segments (about 4 KB of text), what a full payload
// carries.
func benchRecord() *api.Transcription {
	text := strings.Repeat("The quarterly numbers are in and they look good. ", 2)
	t := &api.Transcription{ID: "t-1", Status: "completed", Text: &text, Metadata: json.RawMessage(`{"team":"sales"}`)}
	for i := range 40 {
		start, end := float64(i), float64(i+1)
		t.Segments = append(t.Segments, api.Segment{ID: i + 1, Start: &start, End: &end, Text: text})
	}
	return t
}

// BenchmarkPayload renders and sends one delivery as an attempt does: the event's data with
// local paths hidden (payload), the full record for a full payload (from the relay's cache
// after the first), the envelope encoded, the endpoint's filter and transform run, the body
// encoded and signed, the request made, against a transport that answers 200 at once.
// thin, full and transform (thin with a jq filter and transform) name the cases; compare runs
// with benchstat: go test ./bridge/relay -run '^$' -bench Payload -count 10 > new.txt
func BenchmarkPayload(b *testing.B) {
	s, _ := webhook.NewSecret()
	cases := []struct {
		name string
		cfg  EndpointConfig
	}{
		{"thin", EndpointConfig{Payload: PayloadThin}},
		{"full", EndpointConfig{Payload: PayloadFull}},
		{"transform", EndpointConfig{Payload: PayloadThin, Filter: `.type | startswith("transcription.")`,
			Transform: `{id: .data.transcription_id, file: .data.source.file, at: .timestamp}`}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			c.cfg.Name, c.cfg.URL, c.cfg.AllowPrivate = "crm", "http://receiver.test/hook", true
			c.cfg.Secrets = []webhook.Secret{s}
			e, err := NewEndpoint(c.cfg)
			if err != nil {
				b.Fatal(err)
			}
			r := &Relay{API: oneRecord{benchRecord()}}
			r.init()
			client := &http.Client{Transport: answer200{}}
			d := &bridge.Delivery{EventID: 1, Endpoint: "crm", WebhookID: "msg_1", Type: "transcription.completed", JobID: "j-1",
				TranscriptionID: "t-1", EventAt: time.Now(),
				Data: json.RawMessage(`{"source":{"name":"inbox","item_id":"calls/a.mp4","file":"a.mp4","link":"file:///srv/inbox/calls/a.mp4"}}`)}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				data, err := r.payload(ctx, e, d)
				if err != nil {
					b.Fatal(err)
				}
				res, err := Send(ctx, client, e, Message{ID: d.WebhookID, Type: d.Type, Time: d.EventAt, Data: data}, time.Now())
				if err != nil || !res.OK() {
					b.Fatalf("Send = %+v, %v", res, err)
				}
			}
		})
	}
}
