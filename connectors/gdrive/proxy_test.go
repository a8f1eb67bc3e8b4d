package gdrive_test

import (
	"bytes"
	"context"
	"io"
	"net/url"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors/gdrive"
	"github.com/transcript-bridge/bridge/connectors/gdrive/gdrivetest"
	"github.com/transcript-bridge/bridge/internal/proxytest"
)

// TestCallsGoThroughTheProxy: with HTTP_PROXY set when the source is made, the service
// account's token request, the listing and the download go through the proxy (the host names
// used exist only behind it).
func TestCallsGoThroughTheProxy(t *testing.T) {
	fake := gdrivetest.Start(t)
	folder := fake.Folder("Calls", gdrivetest.Root(sam), sam, "")
	audio := bytes.Repeat([]byte("audio "), 2000)
	fake.Put("standup.wav", "audio/wav", folder, sam, "", audio)
	// Before the proxy is set, calls go direct (and a process-wide cache of the environment
	// would keep them so).
	list(t, newSource(t, fake, gdrive.Config{FolderID: folder}), "")
	proxy := proxytest.Start(t, proxytest.To(fake.URL))
	proxy.Use(t)
	u, _ := url.Parse(fake.URL)
	creds := bytes.Replace(fake.ServiceAccountJSON(), []byte(fake.URL+"/token"), []byte("http://oauth2.example.test:"+u.Port()+"/token"), 1)
	src, err := gdrive.New(context.Background(), gdrive.Config{Credentials: creds, Subjects: []string{sam}, FolderID: folder,
		Endpoint: "http://drive.example.test:" + u.Port(), MinBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	recs, _ := list(t, src, "")
	if len(recs) != 1 {
		t.Fatalf("listed %d recordings, want 1", len(recs))
	}
	rc, err := src.Open(context.Background(), recs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if b, err := io.ReadAll(rc); err != nil || !bytes.Equal(b, audio) {
		t.Fatalf("download = %d bytes, %v; want the file", len(b), err)
	}
	for _, host := range []string{"oauth2.example.test", "drive.example.test"} {
		if proxy.Hits(host) == 0 {
			t.Errorf("no request to %s went through the proxy", host)
		}
	}
}
