package natstest_test

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/transcript-bridge/bridge/internal/natstest"
)

// TestEmbedded: the embedded server has JetStream, and Prefix's streams are gone after the test
// that made them while another test's stream stays.
func TestEmbedded(t *testing.T) {
	checkPrefix(t, natstest.Embedded(t))
}

// TestURL: the same against the real server.
func TestURL(t *testing.T) {
	checkPrefix(t, natstest.URL(t))
}

func checkPrefix(t *testing.T, url string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	other := natstest.Prefix(t, url) // deleted when this whole test ends
	otherStream := strings.ToUpper(other)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: otherStream, Subjects: []string{other + ".>"}, Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	var prefix string
	t.Run("make", func(t *testing.T) {
		prefix = natstest.Prefix(t, url)
		if prefix == other || !strings.HasPrefix(prefix, "t_") {
			t.Fatalf("Prefix = %q (other %q)", prefix, other)
		}
		for _, s := range []jetstream.StreamConfig{
			{Name: strings.ToUpper(prefix), Subjects: []string{prefix + ".a.>"}},
			// One subject under the prefix is enough.
			{Name: strings.ToUpper(prefix) + "_ONE", Subjects: []string{prefix + "_x.events", prefix + ".b"}},
		} {
			s.Storage = jetstream.MemoryStorage
			if _, err := js.CreateStream(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := js.Publish(ctx, prefix+".a.events", []byte("x")); err != nil {
			t.Fatal(err)
		}
		got := natstest.Streams(t, url, prefix)
		slices.Sort(got)
		if want := []string{strings.ToUpper(prefix), strings.ToUpper(prefix) + "_ONE"}; !slices.Equal(got, want) {
			t.Fatalf("Streams = %v, want %v", got, want)
		}
	})
	if got := natstest.Streams(t, url, prefix); len(got) != 0 {
		t.Errorf("streams of %s after its test: %v", prefix, got)
	}
	if got := natstest.Streams(t, url, other); !slices.Equal(got, []string{otherStream}) {
		t.Errorf("streams of the other prefix %s: %v, want [%s]", other, got, otherStream)
	}
}

// TestUnavailable: without the variable, or with nothing listening at its address, a test
// skips with one line naming the variable; under CI=true it fails with the same line.
func TestUnavailable(t *testing.T) {
	if os.Getenv("NATSTEST_CHILD") == "1" {
		natstest.URL(t)
		t.Fatal("URL returned without a server")
	}
	for _, c := range []struct{ name, url, ci, want string }{
		{"unset", "", "", "--- SKIP"},
		{"unreachable", "nats://127.0.0.1:1", "", "--- SKIP"},
		{"unset under CI", "", "true", "--- FAIL"},
		{"unreachable under CI", "nats://127.0.0.1:1", "true", "--- FAIL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestUnavailable$", "-test.v")
			cmd.Env = append(os.Environ(), "NATSTEST_CHILD=1", natstest.EnvURL+"="+c.url, "CI="+c.ci)
			out, _ := cmd.CombinedOutput()
			if !strings.Contains(string(out), c.want) || !strings.Contains(string(out), "set "+natstest.EnvURL+"=nats://") {
				t.Fatalf("want %q and the variable named; output:\n%s", c.want, out)
			}
			if strings.Contains(string(out), "URL returned") {
				t.Fatalf("URL returned without a server:\n%s", out)
			}
		})
	}
}

// TestNoJetStream: a server without JetStream counts as unavailable.
func TestNoJetStream(t *testing.T) {
	if os.Getenv("NATSTEST_CHILD") == "1" {
		natstest.URL(t)
		t.Fatal("URL returned without JetStream")
	}
	// A plain in-process server is not what Embedded makes; start one by hand.
	url := plainServer(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoJetStream$", "-test.v")
	cmd.Env = append(os.Environ(), "NATSTEST_CHILD=1", natstest.EnvURL+"="+url, "CI=")
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "--- SKIP") || !strings.Contains(string(out), "has no JetStream") {
		t.Fatalf("want a skip saying the server has no JetStream; output:\n%s", out)
	}
}
