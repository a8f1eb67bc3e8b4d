package connectors_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		value string
		want  time.Duration
	}{
		{"", 0},
		{"120", 2 * time.Minute},
		{" 5 ", 5 * time.Second},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{"-3", 0},
		{"604800", 24 * time.Hour},
		{"soon", 0},
	} {
		if got := connectors.RetryAfter(tc.value, now); got != tc.want {
			t.Errorf("RetryAfter(%q) = %v, want %v", tc.value, got, tc.want)
		}
	}
}

func TestTransientStatus(t *testing.T) {
	for _, tc := range []struct {
		status int
		want   bool
	}{
		{200, false}, {400, false}, {401, false}, {403, false}, {404, false}, {412, false},
		{408, true}, {425, true}, {429, true}, {500, true}, {502, true}, {503, true}, {504, true},
	} {
		if got := connectors.TransientStatus(tc.status); got != tc.want {
			t.Errorf("TransientStatus(%d) = %v, want %v", tc.status, got, tc.want)
		}
	}
}
