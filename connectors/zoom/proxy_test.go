package zoom_test

import (
	"bytes"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors/zoom"
	"github.com/transcript-bridge/bridge/connectors/zoom/zoomtest"
	"github.com/transcript-bridge/bridge/internal/proxytest"
)

// TestCallsGoThroughTheProxy: with HTTP_PROXY set when the source is made, the OAuth token,
// the API calls and the downloads go through the proxy (the host names used exist only behind
// it; downloads come from a host under api_url's, as Zoom's come from a host under zoom.us).
func TestCallsGoThroughTheProxy(t *testing.T) {
	fake := zoomtest.Start(t)
	fake.AddUser("u1", "sam@acme.test", "active")
	audio := bytes.Repeat([]byte("audio "), 2000)
	m := fake.AddMeeting("u1", "", "standup", day, map[string][]byte{"M4A": audio})
	// Before the proxy is set, calls go direct (and a process-wide cache of the environment
	// would keep them so).
	if _, err := read(newSource(t, fake, zoom.Config{}), one(t, newSource(t, fake, zoom.Config{}), "standup")); err != nil {
		t.Fatal(err)
	}
	proxy := proxytest.Start(t, proxytest.To(fake.URL))
	proxy.Use(t)
	port := must(url.Parse(fake.URL)).Port()
	fake.Edit(func() {
		f := m.File("M4A")
		f.DownloadURL = strings.Replace(f.DownloadURL, fake.URL, "http://dl.zoom-api.example.test:"+port, 1)
	})
	src, err := zoom.New(zoom.Config{AccountID: zoomtest.AccountID, ClientID: zoomtest.ClientID, ClientSecret: zoomtest.ClientSecret,
		APIURL: "http://zoom-api.example.test:" + port + "/v2", OAuthURL: "http://zoom-oauth.example.test:" + port + "/oauth/token",
		RequestsPerSecond: 1000, Now: func() time.Time { return day.Add(2 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	b, err := read(src, one(t, src, "standup"))
	if err != nil || !bytes.Equal(b, audio) {
		t.Fatalf("download = %d bytes, %v; want the recording", len(b), err)
	}
	for _, host := range []string{"zoom-oauth.example.test", "zoom-api.example.test", "dl.zoom-api.example.test"} {
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
