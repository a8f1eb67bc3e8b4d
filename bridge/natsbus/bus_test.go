package natsbus_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/transcript-bridge/bridge/bridge/natsbus"
	"github.com/transcript-bridge/bridge/internal/natstest"
)

// TestNewFails: an unreachable server, a server without JetStream and a stream holding other
// subjects are refused by the constructors, naming the key to look at.
func TestNewFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "nats://" + ln.Addr().String()
	ln.Close()
	if _, _, err := natsbus.New(natsbus.Config{URL: closed}, nil); err == nil || !strings.HasPrefix(err.Error(), "bus.url: connect to "+closed) {
		t.Errorf("unreachable server: %v", err)
	}

	plain := startServer(t, &server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true})
	if _, err := natsbus.NewPublisher(natsbus.Config{URL: plain.ClientURL()}, nil); err == nil || !strings.Contains(err.Error(), "bus.url: ") ||
		!strings.Contains(err.Error(), "-js") {
		t.Errorf("server without JetStream: %v", err)
	}

	url := natstest.Embedded(t)
	prefix := natstest.Prefix(t, url)
	js := jetStream(t, url)
	if _, err := js.CreateStream(context.Background(), jetstream.StreamConfig{Name: "OTHER", Subjects: []string{prefix + "_other.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := natsbus.NewSubscriber(natsbus.Config{URL: url, SubjectPrefix: prefix, Stream: "OTHER"}, nil); err == nil || !strings.HasPrefix(err.Error(), "bus.stream: ") {
		t.Errorf("stream with other subjects: %v", err)
	}
	if _, err := natsbus.NewSubscriber(natsbus.Config{URL: url, AckWait: time.Millisecond}, nil); err == nil || !strings.HasPrefix(err.Error(), "bus.ack_wait: ") {
		t.Errorf("bad config: %v", err)
	}
}

// TestExistingStream: a stream made by an operator with other limits is used as it is, and
// two replicas starting together both succeed.
func TestExistingStream(t *testing.T) {
	url := natstest.Embedded(t)
	prefix := natstest.Prefix(t, url)
	js := jetStream(t, url)
	name := strings.ToUpper(prefix)
	if _, err := js.CreateStream(context.Background(), jetstream.StreamConfig{Name: name, Subjects: []string{prefix + ".>"}, MaxAge: time.Hour,
		Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			pub, sub, err := natsbus.New(testConfig(url, prefix, "relay"), nil)
			if err == nil {
				pub.Close()
				sub.Close()
			}
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	s, err := js.Stream(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if cfg := s.CachedInfo().Config; cfg.MaxAge != time.Hour || cfg.Storage != jetstream.MemoryStorage {
		t.Errorf("the operator's stream was changed: %+v", cfg)
	}
}

// TestServerRestart: publisher and subscriber ride out a restart of the server; the group's
// durable consumer and the unread messages survive it.
func TestServerRestart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	opts := &server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true}
	srv := startServer(t, opts)
	url := srv.ClientURL()
	pub, sub := newPubSub(t, testConfig(url, "bridge", "relay"))
	defer pub.Close()
	defer sub.Close()
	ch := subscribe(t, sub, "events")
	publish(t, pub, "events", "before")
	receive(t, ch, 10*time.Second).Ack()

	srv.Shutdown()
	srv.WaitForShutdown()
	startServer(t, opts) // same port and store
	deadline := time.Now().Add(20 * time.Second)
	for _, id := range []string{"after-1", "after-2"} {
		for {
			err := pub.Publish("events", message.NewMessage(id, nil))
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("publish after the restart: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	for _, want := range []string{"after-1", "after-2"} {
		m := receive(t, ch, 30*time.Second)
		if m.UUID != want {
			t.Fatalf("after the restart: %s, want %s", m.UUID, want)
		}
		m.Ack()
	}
	waitBacklog(t, sub, "events", 0)
}

func startServer(t *testing.T, opts *server.Options) *server.Server {
	t.Helper()
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	t.Cleanup(srv.Shutdown)
	return srv
}
