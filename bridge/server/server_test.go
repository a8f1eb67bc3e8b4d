package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/transcript-bridge/bridge/bridge/server"
)

func TestServeAndShutdown(t *testing.T) {
	s := server.New("127.0.0.1:0", nil)
	s.Handle("POST /hooks/zoom/zoom", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("hook")) }))
	addr, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	for _, tc := range []struct{ method, path, want string }{
		{"GET", "/healthz", "ok\n"},
		{"POST", "/hooks/zoom/zoom", "hook"},
		{"GET", "/hooks/zoom/zoom", "Method Not Allowed\n"},
	} {
		req, _ := http.NewRequest(tc.method, "http://"+addr+tc.path, strings.NewReader(""))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != tc.want {
			t.Errorf("%s %s = %q, want %q", tc.method, tc.path, b, tc.want)
		}
	}
	if _, err := server.New(addr, nil).Listen(); err == nil || !strings.Contains(err.Error(), "server.addr "+addr) {
		t.Errorf("Listen on a taken address = %v, want an error naming server.addr", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve after cancel = %v, want nil (a graceful shutdown)", err)
	}
}
