package status

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/transcript-bridge/bridge/bridge"
)

// TestSourceDownIsRed (issue 31, point 5): a source whose scans fail is shown on the overview's
// Sources card in red with its error and since when, as soon as the scans say so (the card's
// cache does not hide it); once it can be read again the red line goes.
func TestSourceDownIsRed(t *testing.T) {
	var mu sync.Mutex
	health := []bridge.SourceHealth{{Source: "inbox", Up: true, Since: t0}}
	rg := newRig(t, func(o *Options) {
		o.SourceHealth = func() []bridge.SourceHealth {
			mu.Lock()
			defer mu.Unlock()
			return health
		}
	})
	rg.login(t, rg.client)
	if _, page := rg.get(t, rg.client, "/"); strings.Contains(page, "source-down") {
		t.Errorf("a source that can be read is shown down:\n%s", page)
	}
	mu.Lock()
	health = []bridge.SourceHealth{{Source: "inbox", Since: t0, Failures: 4, Error: "scan inbox: open /data/inbox: no such file or directory"}}
	mu.Unlock()
	code, page := rg.get(t, rg.client, "/")
	if code != http.StatusOK {
		t.Fatalf("GET / = %d", code)
	}
	contains(t, "the overview with inbox down", page, `class="bad source-down"`, "cannot be read", "4 failed scans",
		"scan inbox: open /data/inbox: no such file or directory", `datetime="`+t0.UTC().Format("2006-01-02T15:04:05Z")+`"`)
	mu.Lock()
	health = []bridge.SourceHealth{{Source: "inbox", Up: true, Since: t0}}
	mu.Unlock()
	if _, page := rg.get(t, rg.client, "/"); strings.Contains(page, "source-down") {
		t.Errorf("a source that can be read again is still shown down")
	}
}
