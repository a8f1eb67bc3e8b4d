package teams_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/connectors/teams"
	"github.com/transcript-bridge/bridge/connectors/teams/teamstest"
)

// FuzzGraphNotification (issue 30, point 7): whatever a caller posts to the notification
// endpoint, the handler answers without a server error other than its documented 503 (a full
// queue), and accepts (202) nothing that lacks the subscription's clientState.
func FuzzGraphNotification(f *testing.F) {
	for _, s := range []string{
		`{"value":[{"subscriptionId":"s","clientState":"` + clientState + `","changeType":"created","resource":"communications/onlineMeetings/getAllRecordings","resourceData":{"id":"r1"}}]}`,
		`{"value":[{"clientState":"` + clientState + `","lifecycleEvent":"reauthorizationRequired","subscriptionId":"s"}]}`,
		`{"value":[{"clientState":"wrong","changeType":"created"}]}`,
		`{"value":[]}`, `{}`, `[]`, `null`, "", `{"value":[{"clientState":null}]}`,
		`{"value":[{"clientState":"` + clientState + `","resource":"users('x')/onlineMeetings('y')/recordings('z')"}]}`,
	} {
		f.Add([]byte(s), "")
	}
	f.Add([]byte(""), "?validationToken=abc%3Cscript%3E")
	fake := teamstest.Start(f)
	p := newPushed(f, fake, teams.Config{})
	h := p.src.Handler(func(_ context.Context, _ []connectors.Recording) error { return nil })
	f.Fuzz(func(t *testing.T, body []byte, query string) {
		req := httptest.NewRequest(http.MethodPost, "/hooks/teams/teams", bytes.NewReader(body))
		req.URL.RawQuery = strings.TrimPrefix(query, "?")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		code := w.Code
		if code >= 500 && code != http.StatusServiceUnavailable {
			t.Errorf("POST %q (query %q) = %d", body, query, code)
		}
		if code == http.StatusAccepted {
			var batch struct {
				Value []struct {
					ClientState string `json:"clientState"`
				} `json:"value"`
			}
			json.Unmarshal(body, &batch)
			for _, n := range batch.Value {
				if n.ClientState != clientState {
					t.Errorf("POST %q with clientState %q = 202, want refused", body, n.ClientState)
				}
			}
		}
		if req.URL.Query().Has("validationToken") && w.Header().Get("Content-Type") != "text/plain; charset=utf-8" && code == http.StatusOK {
			t.Errorf("validation answered as %q, want text/plain", w.Header().Get("Content-Type"))
		}
	})
}
