package natstest_test

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// plainServer starts an in-process NATS server without JetStream and returns its URL.
func plainServer(t *testing.T) string {
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	t.Cleanup(srv.Shutdown)
	return srv.ClientURL()
}
