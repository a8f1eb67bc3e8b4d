package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"

	"github.com/transcript-bridge/bridge/bridge/server"
)

func TestHealthURL(t *testing.T) {
	for addr, want := range map[string]string{
		"":               "http://127.0.0.1:8080/healthz",
		"0.0.0.0:8080":   "http://127.0.0.1:8080/healthz",
		":9090":          "http://127.0.0.1:9090/healthz",
		"[::]:8080":      "http://127.0.0.1:8080/healthz",
		"10.1.2.3:8080":  "http://10.1.2.3:8080/healthz",
		"localhost:8081": "http://localhost:8081/healthz",
	} {
		if got, err := healthURL(addr); err != nil || got != want {
			t.Errorf("healthURL(%q) = %q, %v; want %q", addr, got, err, want)
		}
	}
	if _, err := healthURL("8080"); err == nil {
		t.Error(`healthURL("8080") = nil error, want one (no port)`)
	}
}

// TestHealthcheck: bridge healthcheck asks the server at BRIDGE_SERVER__ADDR (a container's
// 0.0.0.0 on loopback) or --url, and exits 1 when nothing answers.
func TestHealthcheck(t *testing.T) {
	srv := server.New("127.0.0.1:0", nil)
	addr, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	defer func() { cancel(); <-done }()
	_, port, _ := net.SplitHostPort(addr)

	t.Setenv("BRIDGE_SERVER__ADDR", "0.0.0.0:"+port)
	var out, errb bytes.Buffer
	if code := Run(ctx, []string{"healthcheck"}, &out, &errb); code != 0 || out.String() != "ok http://127.0.0.1:"+port+"/healthz\n" {
		t.Errorf("healthcheck = %d, %q %q; want 0 and ok", code, out.String(), errb.String())
	}
	errb.Reset()
	if code := Run(ctx, []string{"healthcheck", "--url", "http://" + addr + "/nothing"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "404 Not Found") {
		t.Errorf("healthcheck of a 404 = %d, %q; want 1 naming the status", code, errb.String())
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	errb.Reset()
	t.Setenv("BRIDGE_SERVER__ADDR", closed)
	if code := Run(ctx, []string{"healthcheck", "--timeout", "2s"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "connection refused") {
		t.Errorf("healthcheck with nothing listening = %d, %q; want 1", code, errb.String())
	}
}
