package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// receiverSecret is the secret of the scripts' webhook receiver.
const receiverSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

func TestMain(m *testing.M) {
	// The crash test runs this binary as `bridge` in a child process.
	if os.Getenv("BRIDGE_TEST_CHILD") == "1" {
		os.Exit(Run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	parallelWaitingTests()
	testscript.Main(m, map[string]func(){
		"bridge": func() { os.Exit(Run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// waitingTestsParallel is how many of this package's parallel tests run at once unless
// -parallel says otherwise. They spend most of their time waiting for the bridges they start
// as child processes (crashes, kills, outages, scripts): with 4 at once, the package's run
// under -race kept 0.85 of a core busy and took 264 s instead of 448 with GOMAXPROCS (2) at once
// (2026-11-28, on 2 cores).
const waitingTestsParallel = 4

// parallelWaitingTests sets -test.parallel to max(waitingTestsParallel, GOMAXPROCS) when the
// command line does not set it.
func parallelWaitingTests() {
	for _, a := range os.Args[1:] {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); name == "test.parallel" {
			return
		}
	}
	if err := flag.Set("test.parallel", strconv.Itoa(max(waitingTestsParallel, runtime.GOMAXPROCS(0)))); err != nil {
		panic(err)
	}
}

// TestScripts runs the command-line scripts under testdata/script, each against its own
// sandbox (seeded with sandboxtest.Seed) whose URL and owner key are in the environment.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			srv, err := sandbox.New(context.Background(), sandbox.Options{
				DBPath: filepath.Join(env.WorkDir, ".sandbox.db"), Seed: sandboxtest.Seed(), TimeScale: 0.001, MediaDir: env.WorkDir,
			})
			if err != nil {
				return err
			}
			ts := httptest.NewServer(srv)
			env.Defer(func() { ts.Close(); srv.Close() })
			env.Setenv("BRIDGE_API_BASE_URL", ts.URL+sandbox.BasePath)
			env.Setenv("BRIDGE_API_KEY", sandboxtest.OwnerKey)
			env.Setenv("READ_KEY", sandboxtest.ReadKey)
			env.Setenv("SAM_ID", sandboxtest.SamID)
			// A webhook receiver that checks signatures with receiverSecret.
			secret, _ := webhook.ParseSecret(receiverSecret)
			rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				switch r.URL.Path {
				case "/gone":
					w.WriteHeader(http.StatusGone)
					return
				case "/fail":
					w.WriteHeader(http.StatusInternalServerError)
					return
				}
				if err := webhook.Verify(r.Header, body, time.Now(), 0, secret); err != nil {
					http.Error(w, err.Error(), http.StatusUnauthorized)
					return
				}
				fmt.Fprintf(w, `{"received":%q}`, r.Header.Get(webhook.HeaderID))
			}))
			env.Defer(rx.Close)
			env.Setenv("RECEIVER_URL", rx.URL)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"mkwav":    cmdMkwav,
			"capture":  cmdCapture,
			"zipnames": cmdZipnames,
			"trimnl":   cmdTrimNewline,
			"expand":   cmdExpand,
			"exits":    cmdExits,
			"jsonlog":  cmdJSONLog,
		},
	})
}

// mkwav NAME SECONDS [SEED]: write a WAV recording of that length.
func cmdMkwav(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: mkwav NAME SECONDS [SEED]")
	}
	secs, err := strconv.Atoi(args[1])
	ts.Check(err)
	seed := uint32(1)
	if len(args) > 2 {
		n, err := strconv.Atoi(args[2])
		ts.Check(err)
		seed = uint32(n)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), wavBytes(secs, seed), 0o644))
}

// capture FIELD VAR: set VAR to the top-level JSON field of the last command's stdout.
func cmdCapture(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: capture FIELD VAR")
	}
	var v map[string]any
	ts.Check(json.Unmarshal([]byte(ts.ReadFile("stdout")), &v))
	val, ok := v[args[0]]
	if !ok {
		ts.Fatalf("stdout has no field %q", args[0])
	}
	ts.Setenv(args[1], fmt.Sprint(val))
}

// zipnames FILE: print the names in a ZIP archive, one a line.
func cmdZipnames(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: zipnames FILE")
	}
	zr, err := zip.OpenReader(ts.MkAbs(args[0]))
	ts.Check(err)
	defer zr.Close()
	for _, f := range zr.File {
		fmt.Fprintln(ts.Stdout(), f.Name)
	}
}

// trimnl FILE: drop the final newline txtar adds to every file (webhook bodies are signed byte
// for byte).
func cmdTrimNewline(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: trimnl FILE")
	}
	p := ts.MkAbs(args[0])
	b, err := os.ReadFile(p)
	ts.Check(err)
	ts.Check(os.WriteFile(p, bytes.TrimSuffix(b, []byte("\n")), 0o644))
}

// expand FILE: replace $VAR and ${VAR} in the file with the script's environment.
func cmdExpand(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: expand FILE")
	}
	p := ts.MkAbs(args[0])
	b, err := os.ReadFile(p)
	ts.Check(err)
	ts.Check(os.WriteFile(p, []byte(os.Expand(string(b), ts.Getenv)), 0o644))
}

// exits CODE COMMAND [ARGS...]: run the command like exec and fail unless it exits with CODE
// (stdout and stderr are kept for the checks that follow).
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE COMMAND [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("%s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}
