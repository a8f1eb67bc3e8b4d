package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/internal/mediatest"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// bridgeProcess starts `bridge run --once` (or the given arguments) as a child process with the
// failpoints enabled, killed when the test ends if it is still running.
func bridgeProcess(t *testing.T, config string, failpoints string, args ...string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	if len(args) == 0 {
		args = []string{"run", "--once"}
	}
	cmd := exec.Command(os.Args[0], append(args, "--config", config)...)
	cmd.Env = append(os.Environ(), "BRIDGE_TEST_CHILD=1", "BRIDGE_FAILPOINTS="+failpoints, "BRIDGE_API_KEY="+sandboxtest.OwnerKey)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A test that fails midway leaves no bridge running behind it (a stopped one: a no-op).
	t.Cleanup(func() {
		if cmd.Process.Kill() == nil {
			cmd.Wait() // reaped before the test's directories go
		}
	})
	return cmd, bufio.NewScanner(stderr)
}

// killAt runs `bridge run --once` until it reports the failpoint, then SIGKILLs it.
func killAt(t *testing.T, config, point string) {
	t.Helper()
	killAtWith(t, config, point)
}

// runUntilFailpoint runs `bridge run` (watching) until it reports the failpoint, then SIGKILLs it.
func runUntilFailpoint(t *testing.T, config, point string) {
	t.Helper()
	killAtWith(t, config, point, "run")
}

func killAtWith(t *testing.T, config, point string, args ...string) {
	t.Helper()
	cmd, lines := bridgeProcess(t, config, point, args...)
	found := make(chan bool, 1)
	go func() {
		var tail []string
		for lines.Scan() {
			tail = append(tail, lines.Text())
			if lines.Text() == "failpoint "+point {
				found <- true
				for lines.Scan() { // keep draining until the process dies
				}
				return
			}
		}
		t.Logf("child output:\n%s", strings.Join(tail[max(0, len(tail)-20):], "\n"))
		found <- false
	}()
	select {
	case ok := <-found:
		if !ok {
			t.Fatalf("the bridge ended without reaching failpoint %s", point)
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("failpoint %s not reached within a minute", point)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
}

// TestCrashRecovery kills `bridge run` with SIGKILL during an upload, after an upload before its
// id is stored, and while tracking; restarted, it ends with every file transcribed exactly once
// and no minute charged twice, checked through the API.
func TestCrashRecovery(t *testing.T) {
	t.Parallel() // its own sandbox, folder and database: mostly waiting for the children
	if testing.Short() {
		t.Skip("runs the bridge as a child process")
	}
	sb := sandboxtest.Start(t, func(o *sandbox.Options) {
		o.TimeScale = 0.02
		o.Seed.Workspaces[0].BalanceMinutes = 1000
	})
	dir := t.TempDir()
	inbox := filepath.Join(dir, "inbox")
	os.MkdirAll(inbox, 0o755)
	const files = 4
	for i := range files {
		path := filepath.Join(inbox, fmt.Sprintf("meeting-%d.wav", i))
		os.WriteFile(path, wavBytes(60+30*i, uint32(i+1)), 0o644)
	}
	config := filepath.Join(dir, "bridge.yaml")
	os.WriteFile(config, fmt.Appendf(nil, `
api: {base_url: %q, poll_interval: 1s, upload_concurrency: 1}
store: {dsn: %q}
sources:
  - {name: inbox, type: localdir, path: %q, stable_for: 0s, schedule: "@every 1s", author: "email:sam@acme.test",
     upload: {reports: [summary]}}
`, sb.URL, filepath.Join(dir, "bridge.db"), inbox), 0o644)

	killAt(t, config, "upload-body")  // mid-body: the service sees a cut upload
	killAt(t, config, "after-upload") // accepted upstream, id not stored
	killAt(t, config, "tracking")     // while following transcriptions
	cmd, lines := bridgeProcess(t, config, "")
	go func() {
		for lines.Scan() {
		}
	}()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("final run: %v", err)
	}

	c, err := api.New(api.Config{BaseURL: sb.URL, Key: sandboxtest.OwnerKey})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var charged float64
	for i := range files {
		ext := fmt.Sprintf("localdir:inbox:meeting-%d.wav@", i)
		completed := 0
		for it, err := range c.All(ctx, api.ListParams{}) {
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(*it.ExternalID, ext) {
				completed++
				charged += math.Ceil(*it.DurationSeconds/60*100) / 100
			}
		}
		if completed != 1 {
			t.Errorf("meeting-%d.wav: %d completed transcriptions, want exactly 1", i, completed)
		}
	}
	ws := sb.Workspace(t, sandboxtest.WorkspaceID)
	if ws.AvailableMinutes != 1000-charged {
		t.Errorf("balance %v, want %v: minutes charged twice", ws.AvailableMinutes, 1000-charged)
	}
	t.Logf("sandbox after the crashes: %v (failed records are uploads cut mid-body, never charged)", ws.Transcriptions)
}

// wavBytes is a valid 8 kHz WAV of secs seconds.
func wavBytes(secs int, seed uint32) []byte { return mediatest.WAV(float64(secs), 0, uint64(seed)) }
