package s3_test

import (
	"bytes"
	"context"
	"io"
	"net/url"
	"testing"

	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/transcript-bridge/bridge/connectors/s3"
	"github.com/transcript-bridge/bridge/internal/proxytest"
)

// TestCallsGoThroughTheProxy: with HTTP_PROXY set when the source is made, listing, HEAD (metadata on) and
// download go through the proxy (the endpoint's host name exists only behind it).
func TestCallsGoThroughTheProxy(t *testing.T) {
	s := startServer(t, s3mem.New())
	audio := bytes.Repeat([]byte("audio "), 2000)
	s.put(t, "calls/standup.m4a", audio, nil)
	// Before the proxy is set, calls go direct (and a process-wide cache of the environment
	// would keep them so).
	if _, _, err := s.source(t, s3.Config{Prefix: "calls/"}).List(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	proxy := proxytest.Start(t, proxytest.To(s.url))
	proxy.Use(t)
	u, _ := url.Parse(s.url)
	behind := &server{backend: s.backend, url: "http://s3.example.test:" + u.Port()}
	src := behind.source(t, s3.Config{Prefix: "calls/", UserMetadata: true})
	recs, _, err := src.List(context.Background(), "")
	if err != nil || len(recs) != 1 {
		t.Fatalf("List = %d recordings, %v; want 1", len(recs), err)
	}
	rc, err := src.Open(context.Background(), recs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if b, err := io.ReadAll(rc); err != nil || !bytes.Equal(b, audio) {
		t.Fatalf("download = %d bytes, %v; want the object", len(b), err)
	}
	if n := proxy.Hits("s3.example.test"); n < 3 {
		t.Errorf("%d requests went through the proxy, want the listing, the HEAD and the download", n)
	}
}
