package relay

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
)

// oneRecord is an API with one transcription.
type oneRecord struct{ t *api.Transcription }

func (o oneRecord) Get(context.Context, string) (*api.Transcription, error) { return o.t, nil }

// TestPayloadHidesLocalPaths: a webhook never shows where files lie on the bridge's disk: a
// localdir recording's file:// link is dropped and the paths in reasons are cut to the file's
// name, while what the user's templates put in the transcription's metadata is sent as is.
func TestPayloadHidesLocalPaths(t *testing.T) {
	var got []byte
	rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got, _ = io.ReadAll(r.Body) }))
	defer rx.Close()
	ext := "localdir:inbox:calls/a b.mp4@v1"
	rec := &api.Transcription{ID: "t-1", ExternalID: &ext, Metadata: json.RawMessage(`{"path":"/srv/inbox/calls/a b.mp4"}`)}
	r := &Relay{API: oneRecord{rec}}
	r.init()
	e := endpoint(t, EndpointConfig{URL: rx.URL, Secrets: []webhook.Secret{secret(t)}, AllowPrivate: true})
	tests := []struct {
		name, data string
		want       map[string]any // top-level fields of data, compared as JSON
		source     string         // data.source, as JSON
	}{
		{
			name:   "file link",
			data:   `{"source":{"name":"inbox","item_id":"calls/a.mp4","file":"a.mp4","link":"file:///srv/inbox/calls/a.mp4"}}`,
			source: `{"file":"a.mp4","item_id":"calls/a.mp4","name":"inbox"}`,
		},
		{
			name:   "path as a link",
			data:   `{"source":{"name":"inbox","link":"/srv/inbox/a.mp4"}}`,
			source: `{"name":"inbox"}`,
		},
		{
			name:   "windows file link",
			data:   `{"source":{"name":"inbox","link":"file:///C:/inbox/a.mp4"}}`,
			source: `{"name":"inbox"}`,
		},
		{
			name:   "web link kept",
			data:   `{"source":{"name":"zoom","link":"https://zoom.us/rec/play/abc"}}`,
			source: `{"link":"https://zoom.us/rec/play/abc","name":"zoom"}`,
		},
		{
			name: "paths in reasons",
			data: `{"reason":"source: open calls/a.mp4: open /srv/inbox/calls/a.mp4: permission denied","error":"C:\\inbox\\b.mp4 vanished; see file:///srv/inbox/x.mp4","source":{"name":"inbox","link":""}}`,
			want: map[string]any{"reason": "source: open calls/a.mp4: open …/a.mp4: permission denied",
				"error": "…/b.mp4 vanished; see …/x.mp4"},
			source: `{"link":"","name":"inbox"}`,
		},
		{
			name: "no paths",
			data: `{"reason":"unsupported extension .txt (see https://example.com/docs/formats)","code":"x/y","source":{"name":"s3"}}`,
			want: map[string]any{"reason": "unsupported extension .txt (see https://example.com/docs/formats)", "code": "x/y"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := &bridge.Delivery{EventID: 1, Endpoint: "crm", WebhookID: "msg_1", Type: "recording.skipped", JobID: "j-1",
				TranscriptionID: "t-1", Data: json.RawMessage(tc.data)}
			data, err := r.payload(context.Background(), e, d)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Send(context.Background(), NewHTTPClient(true, 5*time.Second), e, Message{ID: d.WebhookID, Type: d.Type, Data: data}, time.Now()); err != nil {
				t.Fatal(err)
			}
			var body struct {
				Data map[string]json.RawMessage `json:"data"`
			}
			if err := json.Unmarshal(got, &body); err != nil {
				t.Fatalf("%v: %s", err, got)
			}
			for k, v := range tc.want {
				if want, _ := json.Marshal(v); string(body.Data[k]) != string(want) {
					t.Errorf("data.%s = %s, want %s", k, body.Data[k], want)
				}
			}
			if tc.source != "" && string(body.Data["source"]) != tc.source {
				t.Errorf("data.source = %s, want %s", body.Data["source"], tc.source)
			}
			if tr := string(body.Data["transcription"]); !strings.Contains(tr, `"metadata":{"path":"/srv/inbox/calls/a b.mp4"}`) {
				t.Errorf("data.transcription = %s, want the metadata the templates made, path included", tr)
			}
			if strings.Contains(strings.ReplaceAll(string(got), `"metadata":{"path":"/srv/inbox/calls/a b.mp4"}`, ""), "/srv/") ||
				strings.Contains(string(got), `C:\\`) {
				t.Errorf("a local path outside the metadata: %s", got)
			}
		})
	}
}
