package api_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/api"
)

// closedURL returns a base URL on which nothing listens.
func closedURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/developer/v1"
}

// TestUnreachableFailsClearly: a call to a closed port stops after UnreachableTimeout (not
// after MaxAttempts of growing backoff) with an error naming the base URL; uploads too.
func TestUnreachableFailsClearly(t *testing.T) {
	base := closedURL(t)
	c, err := api.New(api.Config{BaseURL: base, Key: "mk_live_very_secret", MaxAttempts: 1000,
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, UnreachableTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Workspace(context.Background())
	var ue *api.UnreachableError
	if !errors.Is(err, api.ErrUnreachable) || !errors.As(err, &ue) {
		t.Fatalf("Workspace() on a closed port = %v, want ErrUnreachable", err)
	}
	if !strings.Contains(err.Error(), "cannot reach the API at "+base) || !strings.Contains(err.Error(), "connection refused") ||
		strings.Contains(err.Error(), "very_secret") {
		t.Errorf("Workspace() error = %q, want it to name %s and the refusal, without the key", err, base)
	}
	if ue.Attempts < 2 || ue.Attempts >= 1000 {
		t.Errorf("Workspace() made %d attempts, want a few retries within the timeout", ue.Attempts)
	}
	_, err = c.Upload(context.Background(), api.UploadParams{Filename: "a.wav", Size: 2048, Body: strings.NewReader(strings.Repeat("x", 2048))})
	if !errors.Is(err, api.ErrUnreachable) {
		t.Errorf("Upload() on a closed port = %v, want ErrUnreachable", err)
	}
}
