package natsbus

import (
	"strings"
	"testing"
	"time"
)

func TestDefaults(t *testing.T) {
	var c Config
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	want := Config{URL: "nats://127.0.0.1:4222", SubjectPrefix: "bridge", Stream: "BRIDGE", ConsumerGroup: "relay",
		AckWait: 30 * time.Second, NakDelay: time.Second, MaxInFlight: 100, MaxAge: 7 * 24 * time.Hour, Replicas: 1}
	if c != want {
		t.Errorf("defaults = %+v, want %+v", c, want)
	}
	c = Config{SubjectPrefix: "acme.bridge"}
	c.setDefaults()
	if c.Stream != "ACME_BRIDGE" {
		t.Errorf("stream of prefix acme.bridge = %q, want ACME_BRIDGE", c.Stream)
	}
}

// TestValidate: each bad value is refused with an error naming its key, and a password in the
// URL is not repeated.
func TestValidate(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{URL: "http://127.0.0.1:4222"}, "bus.url: "},
		{Config{URL: "nats://user:s3cret@:4222"}, "bus.url: "},
		{Config{URL: "nats://a:4222,nats:// b"}, "bus.url: "},
		{Config{URL: "127.0.0.1:4222"}, "bus.url: "},
		{Config{SubjectPrefix: "bridge.>"}, "bus.subject_prefix: "},
		{Config{SubjectPrefix: "a..b"}, "bus.subject_prefix: "},
		{Config{SubjectPrefix: "my bridge"}, "bus.subject_prefix: "},
		{Config{SubjectPrefix: "bridge.", Stream: "X"}, "bus.subject_prefix: "},
		{Config{Stream: "bridge.events"}, "bus.stream: "},
		{Config{Stream: "a/b"}, "bus.stream: "},
		{Config{ConsumerGroup: " relay"}, "bus.consumer_group: "},
		{Config{AckWait: time.Millisecond}, "bus.ack_wait: "},
		{Config{AckWait: -time.Second}, "bus.ack_wait: "},
		{Config{NakDelay: -time.Second}, "bus.nak_delay: "},
		{Config{MaxInFlight: -1}, "bus.max_in_flight: "},
		{Config{MaxAge: time.Second}, "bus.max_age: "},
		{Config{Replicas: 7}, "bus.replicas: "},
	} {
		err := c.cfg.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v: Validate() = %v, want an error starting %q", c.cfg, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("the error repeats the password: %v", err)
		}
	}
	good := Config{URL: "nats://a:4222, tls://user:pw@b:4222", SubjectPrefix: "acme.bridge-1", ConsumerGroup: "relay.eu"}
	if err := good.Validate(); err != nil {
		t.Errorf("%+v: %v", good, err)
	}
}

// TestNames: topics with dots map to subjects under the prefix; consumer names hold no dot and
// two different (group, topic) pairs never share one.
func TestNames(t *testing.T) {
	cfg := Config{SubjectPrefix: "bridge"}
	for topic, want := range map[string]string{"events": "bridge.events", "events.poison": "bridge.events.poison"} {
		if got, err := subject(&cfg, topic); err != nil || got != want {
			t.Errorf("subject(%q) = %q, %v; want %q", topic, got, err, want)
		}
	}
	for _, topic := range []string{"", "events.", ".events", "events.*", "events.>", "a b"} {
		if _, err := subject(&cfg, topic); err == nil {
			t.Errorf("subject(%q) accepted", topic)
		}
	}
	seen := map[string][2]string{}
	for _, g := range []string{"relay", "relay_", "relay.x", "relay_2ex", "r"} {
		for _, topic := range []string{"events", "events.poison", "events_poison", "events_2epoison", "x__y", "x_5f_5fy"} {
			name := consumerName(g, topic)
			if strings.ContainsAny(name, ".*> /\\") {
				t.Errorf("consumerName(%q, %q) = %q", g, topic, name)
			}
			if prev, ok := seen[name]; ok {
				t.Errorf("consumerName(%q, %q) = consumerName(%q, %q) = %q", g, topic, prev[0], prev[1], name)
			}
			seen[name] = [2]string{g, topic}
		}
	}
	if got := consumerName("relay", "events.poison"); got != "relay__events_2epoison" {
		t.Errorf("consumerName(relay, events.poison) = %q", got)
	}
}
