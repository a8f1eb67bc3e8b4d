package main

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath is Debian's Chromium (apt-get install -y chromium; .ci/run installs it).
const chromiumPath = "/usr/bin/chromium"

// updateScreenshot makes the browser test write the README's picture of the overview.
var updateScreenshot = flag.Bool("status.screenshot", false, "write docs/status-overview.png from the browser test")

// newBrowser starts a headless Chromium for t with a fresh profile and returns a context
// driving its first tab, ended with the test. Outside CI a machine without Chromium skips the
// test, saying how to install it; under CI=true it fails.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	if _, err := exec.LookPath(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing under CI (.ci/run installs it with apt-get install -y chromium): %v", chromiumPath, err)
		}
		t.Skipf("%s is missing: apt-get install -y chromium to run the browser tests", chromiumPath)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless,
		chromedp.NoSandbox, // the tests run as root
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	// The first call starts the browser, which lives as long as that call's context: no timeout
	// on it (the test's own deadline bounds it).
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", chromiumPath, err)
	}
	return ctx
}

// browse runs steps in the browser within d, failing the test with what as the step.
func browse(t *testing.T, ctx context.Context, d time.Duration, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	cctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if err := chromedp.Do(cctx, steps...); err != nil {
		t.Fatalf("browser: %s: %v", what, err)
	}
}

// textOf returns the visible text of the first element matching the CSS selector sel, waiting
// up to 20 s for it.
func textOf(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	s, err := chromedp.Run(cctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("browser: the text of %s: %v", sel, err)
	}
	return s
}

// screenshot saves the whole page as name (a PNG) among the test's artefacts (t.ArtifactDir:
// kept with go test -artifacts) and returns its path.
func screenshot(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(cctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("browser: screenshot %s: %v", name, err)
	}
	path := filepath.Join(t.ArtifactDir(), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return path
}

// awaitValue reads a value with read until ok says it is the one awaited, within d, and
// returns the last one read.
func awaitValue(t *testing.T, d time.Duration, what string, read func() string, ok func(string) bool) string {
	t.Helper()
	var v string
	for deadline := time.Now().Add(d); ; time.Sleep(300 * time.Millisecond) {
		if v = read(); ok(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %q after %s", what, v, d)
		}
	}
}
