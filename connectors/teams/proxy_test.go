package teams_test

import (
	"bytes"
	"net/url"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors/teams"
	"github.com/transcript-bridge/bridge/connectors/teams/teamstest"
	"github.com/transcript-bridge/bridge/internal/proxytest"
)

// TestCallsGoThroughTheProxy: with HTTP_PROXY set when the source is made, the token, the
// Graph calls and the content request go through the proxy (the host names used exist only
// behind it); the download Graph redirects to, on loopback, goes direct.
func TestCallsGoThroughTheProxy(t *testing.T) {
	fake := teamstest.Start(t)
	sam := fake.AddUser("", "Sam Lee", "sam@acme.test")
	audio := bytes.Repeat([]byte("audio "), 2000)
	fake.AddRecording(sam.ID, day, audio)
	proxy := proxytest.Start(t, func(string) string { return must(url.Parse(fake.URL)).Host })
	proxy.Use(t)
	port := must(url.Parse(fake.URL)).Port()
	src, err := teams.New(teams.Config{TenantID: teamstest.TenantID, ClientID: teamstest.ClientID, ClientSecret: teamstest.ClientSecret,
		GraphURL: "http://graph.example.test:" + port, LoginURL: "http://login.example.test:" + port, StartDate: "2026-11-01",
		Now: func() time.Time { return day.Add(2 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	recs, _ := list(t, src, "")
	if len(recs) != 1 {
		t.Fatalf("listed %d recordings through the proxy, want 1", len(recs))
	}
	if b, err := read(src, recs[0]); err != nil || !bytes.Equal(b, audio) {
		t.Fatalf("download = %d bytes, %v; want the recording", len(b), err)
	}
	for _, host := range []string{"login.example.test", "graph.example.test"} {
		if proxy.Hits(host) == 0 {
			t.Errorf("no request to %s went through the proxy", host)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
