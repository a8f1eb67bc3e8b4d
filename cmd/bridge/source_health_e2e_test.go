package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/transcript-bridge/bridge/bridge/server"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// TestSourceDownInBrowser (issue 31, point 5): a running bridge whose folder is renamed away
// shows it: the status page's Sources card has the source in red with the error and since when
// (screenshot kept), /readyz names it in its advisory sources check and stays 200, /metrics has
// bridge_source_up 0 and counts the failed scans, and the log has one ERROR for the outage.
// When the folder is back, all of it clears.
func TestSourceDownInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the bridge and a browser")
	}
	bctx := newBrowser(t)
	sb := sandboxtest.Start(t, func(o *sandbox.Options) { o.TimeScale = 0.01 })
	dir := t.TempDir()
	inbox := filepath.Join(dir, "inbox")
	os.MkdirAll(inbox, 0o755)
	const token = "admin-token-of-the-source-test"
	os.WriteFile(filepath.Join(dir, "admin.token"), []byte(token+"\n"), 0o600)
	addr := freeAddr(t)
	base := "http://" + addr
	config := filepath.Join(dir, "bridge.yaml")
	os.WriteFile(config, fmt.Appendf(nil, `
api: {base_url: %q, key: %q, poll_interval: 1s}
store: {dsn: %q}
server: {addr: %q, admin_token_file: %q}
sources:
  - {name: inbox, type: localdir, path: %q, stable_for: 0s, schedule: "@every 1s", author: "email:sam@acme.test"}
`, sb.URL, sandboxtest.OwnerKey, filepath.Join(dir, "bridge.db"), addr, filepath.Join(dir, "admin.token"), inbox), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	var errb statusLog
	done := make(chan int, 1)
	go func() { done <- Run(ctx, []string{"run", "--config", config}, io.Discard, &errb) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("bridge run exited %d:\n%s", code, tail(errb.String(), 20))
		}
	})
	get := func(path string) (int, string) {
		res, err := http.Get(base + path)
		if err != nil {
			return 0, err.Error()
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	awaitValue(t, 30*time.Second, "GET /healthz", func() string { code, _ := get("/healthz"); return fmt.Sprint(code) },
		func(s string) bool { return s == "200" })
	if err := os.Rename(inbox, inbox+".away"); err != nil {
		t.Fatal(err)
	}
	sourcesCheck := func() string {
		code, body := get("/readyz")
		var rd server.Readiness
		json.Unmarshal([]byte(body), &rd)
		for _, c := range rd.Checks {
			if c.Name == "sources" {
				return fmt.Sprintf("%d %s ok=%v advisory=%v %s", code, rd.Status, c.OK, c.Advisory, c.Error)
			}
		}
		return body
	}
	got := awaitValue(t, 30*time.Second, "/readyz's sources check", sourcesCheck, func(s string) bool { return strings.Contains(s, "ok=false") })
	if !strings.HasPrefix(got, "200 ready ok=false advisory=true cannot be read: inbox: ") || !strings.Contains(got, inbox) || !strings.Contains(got, "(since ") {
		t.Errorf("/readyz with the folder gone: %s; want 200 ready, the sources check naming inbox, its error and since when", got)
	}
	awaitValue(t, 30*time.Second, "bridge_source_up in /metrics", func() string { _, b := get("/metrics"); return b },
		func(s string) bool {
			return strings.Contains(s, `bridge_source_up{source="inbox"} 0`) && !strings.Contains(s, `bridge_source_scan_errors_total{source="inbox"} 1`+"\n") &&
				strings.Contains(s, `bridge_source_scan_errors_total{source="inbox"} `)
		})

	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	browse(t, bctx, 30*time.Second, "sign in", chromedp.Navigate(base+"/"), chromedp.WaitVisible(css(`#token`)),
		chromedp.SendKeys(css(`#token`), token), chromedp.Submit(css(`#token`)), chromedp.WaitVisible(css(`#h-sources`)))
	row := textOf(t, bctx, `tr.source-down td[colspan]`)
	if !strings.Contains(row, "cannot be read since") || !strings.Contains(row, inbox) || !strings.Contains(row, "failed scans") {
		t.Errorf("the Sources card's line for inbox reads %q, want cannot be read since …, the error naming %s", row, inbox)
	}
	color := evaluate[string](t, bctx, `getComputedStyle(document.querySelector("tr.source-down td")).color`)
	if color != "rgb(179, 38, 30)" { // --bad: #b3261e
		t.Errorf("the line of a source that cannot be read is %s, want red (#b3261e)", color)
	}
	if over := evaluate[bool](t, bctx, `(() => { const c = document.querySelector("#h-sources").closest("section"); return c.scrollWidth > c.clientWidth })()`); over {
		t.Errorf("the Sources card overflows with the source's error")
	}
	screenshot(t, bctx, "status-source-down.png")

	if err := os.Rename(inbox+".away", inbox); err != nil {
		t.Fatal(err)
	}
	awaitValue(t, 30*time.Second, "/readyz's sources check once the folder is back", sourcesCheck, func(s string) bool { return strings.Contains(s, "ok=true") })
	browse(t, bctx, 30*time.Second, "the overview again", chromedp.Navigate(base+"/"), chromedp.WaitVisible(css(`#h-sources`)))
	if down := evaluate[int](t, bctx, `document.querySelectorAll("tr.source-down").length`); down != 0 {
		t.Errorf("%d red line(s) on the Sources card once the folder is back, want none", down)
	}
	logs := errb.String()
	if n := strings.Count(logs, `level=ERROR msg="source cannot be read" source=inbox`); n != 1 {
		t.Errorf("%d ERROR lines for one outage, want 1:\n%s", n, tail(logs, 30))
	}
	if !strings.Contains(logs, `msg="source can be read again" source=inbox`) {
		t.Errorf("the end of the outage is not logged:\n%s", tail(logs, 30))
	}
}

// evaluate is the value of the JavaScript expression in the page, within 10 s.
func evaluate[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(cctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("browser: %s: %v", expr, err)
	}
	return v
}
