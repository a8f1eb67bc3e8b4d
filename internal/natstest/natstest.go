// Package natstest gives tests a NATS server with JetStream: the real one that
// BRIDGE_TEST_NATS_URL names (the machines of this project run it on 127.0.0.1:4222; .ci/run
// starts it and sets the variable), or an embedded one in-process, and a subject prefix of
// their own whose streams are deleted after the test.
//
// Without the variable, or with the server unreachable or without JetStream, URL skips the test
// with one line naming the variable; under CI=true it fails instead, so CI cannot pass by
// skipping.
package natstest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// EnvURL names the variable holding the real server's URL.
const EnvURL = "BRIDGE_TEST_NATS_URL"

// Example is the URL the skip message suggests: the project's machines' server.
const Example = "nats://127.0.0.1:4222"

// URL returns the URL of the real server named by BRIDGE_TEST_NATS_URL, once it has answered
// with JetStream enabled.
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		unavailable(t, EnvURL+" is not set")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := nats.Connect(u, nats.Name("natstest"), nats.Timeout(5*time.Second))
	if err != nil {
		unavailable(t, fmt.Sprintf("NATS at %s is unreachable (%v)", redact(u), err))
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("natstest: %v", err)
	}
	if _, err := js.AccountInfo(ctx); err != nil {
		unavailable(t, fmt.Sprintf("NATS at %s has no JetStream (%v; start nats-server with -js)", redact(u), err))
	}
	return u
}

// Embedded starts a NATS server with JetStream in-process, on a random loopback port with its
// store in a temporary directory, and returns its URL. It is shut down when the test ends.
func Embedded(t testing.TB) string {
	t.Helper()
	srv, err := server.NewServer(&server.Options{
		Host:      "127.0.0.1",
		Port:      server.RANDOM_PORT,
		JetStream: true,
		StoreDir:  t.TempDir(),
		NoLog:     true,
		NoSigs:    true,
	})
	if err != nil {
		t.Fatalf("natstest: embedded server: %v", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		t.Fatal("natstest: embedded server not ready within 10s")
	}
	t.Cleanup(func() {
		srv.Shutdown()
		srv.WaitForShutdown()
	})
	return srv.ClientURL()
}

// Prefix returns a subject prefix unique to the test ("t_" and 12 hex digits, one subject token
// that is also valid in stream and consumer names). When the test ends, every stream on the
// server at u that holds subjects under the prefix is deleted, with its consumers.
func Prefix(t testing.TB, u string) string {
	t.Helper()
	prefix := "t_" + random()
	t.Cleanup(func() {
		if err := deleteStreams(u, prefix); err != nil {
			t.Errorf("natstest: delete the streams of %s: %v", prefix, err)
		}
	})
	return prefix
}

// Streams lists the streams on the server at u that hold subjects under prefix.
func Streams(t testing.TB, u, prefix string) []string {
	t.Helper()
	names, err := streams(u, prefix, nil)
	if err != nil {
		t.Fatalf("natstest: list the streams of %s: %v", prefix, err)
	}
	return names
}

func deleteStreams(u, prefix string) error {
	_, err := streams(u, prefix, func(ctx context.Context, js jetstream.JetStream, name string) error {
		return js.DeleteStream(ctx, name)
	})
	return err
}

// streams lists the streams holding subjects under prefix, calling each (when not nil) on
// every one.
func streams(u, prefix string, each func(context.Context, jetstream.JetStream, string) error) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc, err := nats.Connect(u, nats.Name("natstest"), nats.Timeout(5*time.Second))
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	lister := js.StreamNames(ctx, jetstream.WithStreamListSubject(prefix+".>"))
	var names []string
	for name := range lister.Name() {
		names = append(names, name)
	}
	if err := lister.Err(); err != nil {
		return nil, err
	}
	for _, name := range names {
		if each != nil {
			if err := each(ctx, js, name); err != nil {
				return nil, fmt.Errorf("stream %s: %w", name, err)
			}
		}
	}
	return names, nil
}

// random returns 12 lower-case hex digits.
func random() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// redact hides the user information (a user and password, or a token) of every URL in a
// comma-separated list.
func redact(list string) string {
	parts := strings.Split(list, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil && u.User != nil {
			u.User = url.User("REDACTED")
			parts[i] = u.String()
		}
	}
	return strings.Join(parts, ",")
}

// unavailable skips the test with one line naming the variable, or fails it under CI=true.
func unavailable(t testing.TB, why string) {
	t.Helper()
	msg := fmt.Sprintf("natstest: %s; set %s=%s to run", why, EnvURL, Example)
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		t.Fatal(msg + " (CI=true: a test that needs NATS may not skip)")
	}
	t.Skip(msg)
}
