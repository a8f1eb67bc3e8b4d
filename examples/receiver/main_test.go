package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
)

// TestReceiver: a delivery signed with the endpoint's secret is accepted and printed; one signed
// with another secret, or unsigned, is refused with 401.
func TestReceiver(t *testing.T) {
	secret, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := webhook.NewSecret()
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"type":"transcription.completed","data":{}}`)
	tests := []struct {
		name   string
		header http.Header
		want   int
		out    string
	}{
		{"signed", webhook.Headers("msg_1", now, body, secret), http.StatusNoContent, "verified transcription.completed msg_1"},
		{"other secret", webhook.Headers("msg_2", now, body, other), http.StatusUnauthorized, "REFUSED msg_2"},
		{"unsigned", http.Header{}, http.StatusUnauthorized, "REFUSED"},
	}
	for _, tc := range tests {
		var out bytes.Buffer
		h := handler(&out, func() time.Time { return now }, []webhook.Secret{secret})
		req := httptest.NewRequest(http.MethodPost, "/hooks", bytes.NewReader(body))
		req.Header = tc.header
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.want || !strings.Contains(out.String(), tc.out) {
			t.Errorf("%s: status %d, printed %q; want %d and %q", tc.name, rec.Code, out.String(), tc.want, tc.out)
		}
	}
}
