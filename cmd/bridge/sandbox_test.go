package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSandboxCommand(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"sandbox", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "s.db"),
			"--seed", "../../configs/sandbox.yaml", "--time-scale", "0.01"}, pw, &stderr)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		t.Fatalf("no output; stderr: %s", stderr.String())
	}
	first := lines.Text()
	base, ok := strings.CutPrefix(first, "sandbox: serving the transcription API at ")
	if !ok || !strings.HasSuffix(base, "/developer/v1") {
		t.Fatalf("first line = %q, want the base URL", first)
	}
	go io.Copy(io.Discard, pr)
	rq, _ := http.NewRequest("GET", base+"/workspace", nil)
	rq.Header.Set("Authorization", "Bearer mk_live_owner_full")
	resp, err := http.DefaultClient.Do(rq)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /workspace through bridge sandbox = %d", resp.StatusCode)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit code after interrupt = %d, want 0", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("bridge sandbox did not stop")
	}
}

func TestSandboxCommandDemoKeys(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"sandbox", "--addr", "127.0.0.1:0", "--db", ":memory:"}, pw, io.Discard)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	var keys []string
	for len(keys) < 2 && sc.Scan() {
		for _, f := range strings.Fields(sc.Text()) {
			if strings.HasPrefix(f, "mk_live_") {
				keys = append(keys, f)
			}
		}
	}
	go io.Copy(io.Discard, pr)
	if len(keys) != 2 {
		t.Errorf("printed keys = %v, want the two generated keys of the demo workspace", keys)
	}
	cancel()
	<-done
}

func TestSandboxCommandBadInput(t *testing.T) {
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"sandbox", "--faults", "boom=1"}, 2, `unknown fault "boom"`},
		{[]string{"sandbox", "--seed", "missing.yaml"}, 2, "missing.yaml"},
		{[]string{"sandbox", "--time-scale", "0"}, 2, "--time-scale"},
		{[]string{"sandbox", "--nope"}, 2, "unknown flag: --nope"},
		{[]string{"sandbox", "--addr", "256.0.0.1:1", "--db", ":memory:", "--seed", "../../configs/sandbox.yaml"}, 1, "listen on 256.0.0.1:1"},
	}
	for _, tc := range tests {
		var stderr bytes.Buffer
		code := Run(context.Background(), tc.args, io.Discard, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.msg) {
			t.Errorf("bridge %v = exit %d %q, want exit %d naming %q", tc.args, code, stderr.String(), tc.code, tc.msg)
		}
	}
}
