package natsbus_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/transcript-bridge/bridge/bridge/natsbus"
	"github.com/transcript-bridge/bridge/internal/natstest"
)

// eachServer runs f on an embedded server, and on the real one (BRIDGE_TEST_NATS_URL), each
// under a subject prefix of its own.
func eachServer(t *testing.T, f func(t *testing.T, url, prefix string)) {
	t.Run("embedded", func(t *testing.T) {
		url := natstest.Embedded(t)
		f(t, url, natstest.Prefix(t, url))
	})
	t.Run("server", func(t *testing.T) {
		url := natstest.URL(t)
		f(t, url, natstest.Prefix(t, url))
	})
}

func publish(t *testing.T, pub message.Publisher, topic string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if err := pub.Publish(topic, message.NewMessage(id, []byte(id))); err != nil {
			t.Fatal(err)
		}
	}
}

func subscribe(t *testing.T, sub message.Subscriber, topic string) <-chan *message.Message {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch, err := sub.Subscribe(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func receive(t *testing.T, ch <-chan *message.Message, within time.Duration) *message.Message {
	t.Helper()
	select {
	case m, ok := <-ch:
		if !ok {
			t.Fatal("channel closed")
		}
		return m
	case <-time.After(within):
		t.Fatalf("no message within %v", within)
		return nil
	}
}

func nothing(t *testing.T, ch <-chan *message.Message, within time.Duration) {
	t.Helper()
	select {
	case m, ok := <-ch:
		if ok {
			t.Fatalf("received %s, want nothing", m.UUID)
		}
	case <-time.After(within):
	}
}

func backlog(t *testing.T, sub *natsbus.Subscriber, topic string) int {
	t.Helper()
	n, err := sub.Backlog(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// waitBacklog waits until Backlog reports want.
func waitBacklog(t *testing.T, sub *natsbus.Subscriber, topic string, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := backlog(t, sub, topic)
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Backlog(%s) = %d, want %d", topic, n, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDottedTopics: the bridge's topics events and events.poison are subjects under the
// prefix in one stream; each subscription gets only its own topic, and the same message (one
// UUID) published to both is delivered on both (the poison queue republishes it).
func TestDottedTopics(t *testing.T) {
	eachServer(t, func(t *testing.T, url, prefix string) {
		cfg := testConfig(url, prefix, "relay")
		pub, sub := newPubSub(t, cfg)
		defer pub.Close()
		defer sub.Close()
		events, poison := subscribe(t, sub, "events"), subscribe(t, sub, "events.poison")
		publish(t, pub, "events", "e1")
		publish(t, pub, "events.poison", "e1")
		publish(t, pub, "events", "e2")
		for _, want := range []string{"e1", "e2"} {
			if m := receive(t, events, 10*time.Second); m.UUID != want {
				t.Fatalf("events: %s, want %s", m.UUID, want)
			} else {
				m.Ack()
			}
		}
		if m := receive(t, poison, 10*time.Second); m.UUID != "e1" || string(m.Payload) != "e1" {
			t.Fatalf("events.poison: %s %q, want e1", m.UUID, m.Payload)
		} else {
			m.Ack()
		}
		nothing(t, events, 200*time.Millisecond)
		nothing(t, poison, 10*time.Millisecond)

		if got := natstest.Streams(t, url, prefix); !slices.Equal(got, []string{strings.ToUpper(prefix)}) {
			t.Errorf("streams under %s: %v, want one", prefix, got)
		}
		js := jetStream(t, url)
		for _, name := range []string{"relay__events", "relay__events_2epoison"} {
			c, err := js.Consumer(context.Background(), strings.ToUpper(prefix), name)
			if err != nil {
				t.Fatalf("consumer %s: %v", name, err)
			}
			info := c.CachedInfo()
			if info.Config.Durable != name || info.Config.AckPolicy != jetstream.AckExplicitPolicy || info.Config.MaxAckPending != 1 {
				t.Errorf("consumer %s: %+v", name, info.Config)
			}
		}
	})
}

func jetStream(t *testing.T, url string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// TestRepublishedOnce: a message published twice to a topic (a forwarder that crashed after
// publishing and before recording it) is stored once; metadata travels, the caller's message
// is left as it was.
func TestRepublishedOnce(t *testing.T) {
	eachServer(t, func(t *testing.T, url, prefix string) {
		pub, sub := newPubSub(t, testConfig(url, prefix, "relay"))
		defer pub.Close()
		defer sub.Close()
		m := message.NewMessage("m1", []byte(`{"event_id":1}`))
		middleware.SetCorrelationID("job-1", m)
		for range 2 {
			if err := pub.Publish("events", m); err != nil {
				t.Fatal(err)
			}
		}
		if len(m.Metadata) != 1 {
			t.Errorf("the caller's metadata changed: %v", m.Metadata)
		}
		if n := backlog(t, sub, "events"); n != 1 {
			t.Errorf("Backlog after publishing m1 twice = %d, want 1", n)
		}
		got := receive(t, subscribe(t, sub, "events"), 10*time.Second)
		if got.UUID != "m1" || middleware.MessageCorrelationID(got) != "job-1" || len(got.Metadata) != 1 {
			t.Errorf("received %s %v", got.UUID, got.Metadata)
		}
		got.Ack()
		waitBacklog(t, sub, "events", 0)
	})
}

// TestAckAfterHandler: the group's backlog shrinks only when the handler acks; a nacked
// message comes back (after bus.nak_delay) before the next one (one in flight: order holds);
// an acked one never does.
func TestAckAfterHandler(t *testing.T) {
	eachServer(t, func(t *testing.T, url, prefix string) {
		cfg := testConfig(url, prefix, "relay")
		cfg.NakDelay = 300 * time.Millisecond
		pub, sub := newPubSub(t, cfg)
		defer pub.Close()
		defer sub.Close()
		publish(t, pub, "events", "a", "b", "c")
		if n := backlog(t, sub, "events"); n != 3 {
			t.Fatalf("Backlog = %d, want 3", n)
		}
		ch := subscribe(t, sub, "events")
		a := receive(t, ch, 10*time.Second)
		nothing(t, ch, 200*time.Millisecond) // b waits for a's answer
		if n := backlog(t, sub, "events"); n != 3 {
			t.Fatalf("Backlog while a is in its handler = %d, want 3", n)
		}
		a.Nack()
		nacked := time.Now()
		again := receive(t, ch, 10*time.Second)
		if again.UUID != "a" {
			t.Fatalf("after a's nack: %s, want a again", again.UUID)
		}
		if d := time.Since(nacked); d < 250*time.Millisecond {
			t.Errorf("a came back %v after its nack, before bus.nak_delay", d)
		}
		again.Ack()
		for _, want := range []string{"b", "c"} {
			m := receive(t, ch, 10*time.Second)
			if m.UUID != want {
				t.Fatalf("got %s, want %s", m.UUID, want)
			}
			m.Ack()
		}
		waitBacklog(t, sub, "events", 0)
		nothing(t, ch, 300*time.Millisecond)
	})
}

// TestAckWait: a message whose handler never answers is delivered again after bus.ack_wait,
// to the group's other subscriber.
func TestAckWait(t *testing.T) {
	eachServer(t, func(t *testing.T, url, prefix string) {
		cfg := testConfig(url, prefix, "relay")
		cfg.AckWait = time.Second
		pub, sub1 := newPubSub(t, cfg)
		defer pub.Close()
		defer sub1.Close()
		_, sub2 := newPubSub(t, cfg)
		defer sub2.Close()
		publish(t, pub, "events", "stuck")
		ch1 := subscribe(t, sub1, "events")
		m := receive(t, ch1, 10*time.Second) // never answered
		start := time.Now()
		ch2 := subscribe(t, sub2, "events")
		var again *message.Message
		select {
		case again = <-ch1:
		case again = <-ch2:
		case <-time.After(10 * time.Second):
			t.Fatal("not delivered again")
		}
		if again.UUID != m.UUID {
			t.Fatalf("got %s, want %s again", again.UUID, m.UUID)
		}
		if d := time.Since(start); d < 800*time.Millisecond {
			t.Errorf("delivered again after %v, before bus.ack_wait", d)
		}
		again.Ack()
		waitBacklog(t, sub1, "events", 0)
	})
}

// TestDurableGroups: a group resumes where it stopped (nothing acked comes again, nothing
// unacked is lost) and a new group reads everything the stream holds.
func TestDurableGroups(t *testing.T) {
	eachServer(t, func(t *testing.T, url, prefix string) {
		pub, sub := newPubSub(t, testConfig(url, prefix, "relay"))
		defer pub.Close()
		publish(t, pub, "events", "1", "2", "3", "4", "5")
		ctx, cancel := context.WithCancel(context.Background())
		ch, err := sub.Subscribe(ctx, "events")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"1", "2"} {
			if m := receive(t, ch, 10*time.Second); m.UUID != want {
				t.Fatalf("got %s, want %s", m.UUID, want)
			} else {
				m.Ack()
			}
		}
		cancel()
		for range ch { // closes once the subscription is over
		}
		if err := sub.Close(); err != nil {
			t.Fatal(err)
		}

		_, again := newPubSub(t, testConfig(url, prefix, "relay"))
		defer again.Close()
		ch = subscribe(t, again, "events")
		// At least once: an unacked message may come twice (NATS 2.9 redelivers one given
		// back by a subscription on its way out), an acked one never.
		var got []string
		for !slices.Equal(got, []string{"3", "4", "5"}) {
			m := receive(t, ch, 10*time.Second)
			m.Ack()
			if m.UUID == "1" || m.UUID == "2" {
				t.Fatalf("resumed group: got %s again after its ack", m.UUID)
			}
			if !slices.Contains(got, m.UUID) {
				got = append(got, m.UUID)
			}
			if len(got) == 3 && !slices.Equal(got, []string{"3", "4", "5"}) {
				t.Fatalf("resumed group: got %v, want [3 4 5]", got)
			}
		}
		_, other := newPubSub(t, testConfig(url, prefix, "audit"))
		defer other.Close()
		ch = subscribe(t, other, "events")
		for _, want := range []string{"1", "2", "3", "4", "5"} {
			if m := receive(t, ch, 10*time.Second); m.UUID != want {
				t.Fatalf("new group: got %s, want %s", m.UUID, want)
			} else {
				m.Ack()
			}
		}
	})
}

// TestStopReturnsMessageAtOnce: a subscription that ends holding a message it never handed
// out gives it back: from NATS 2.10 on the group's other subscriber has it at once; NATS 2.9
// sends it back to the ending subscription's pull, where it waits for bus.ack_wait.
func TestStopReturnsMessageAtOnce(t *testing.T) {
	eachServer(t, func(t *testing.T, url, prefix string) {
		cfg := testConfig(url, prefix, "relay")
		cfg.AckWait, cfg.NakDelay = 3*time.Second, time.Millisecond
		pub, sub1 := newPubSub(t, cfg)
		defer pub.Close()
		defer sub1.Close()
		publish(t, pub, "events", "m")
		ctx, cancel := context.WithCancel(context.Background())
		ch1, err := sub1.Subscribe(ctx, "events")
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond) // delivered to sub1, not read from ch1
		cancel()
		start := time.Now()
		for m := range ch1 {
			t.Errorf("received %s after the subscription ended", m.UUID)
		}
		_, sub2 := newPubSub(t, cfg)
		defer sub2.Close()
		m := receive(t, subscribe(t, sub2, "events"), 10*time.Second)
		if m.UUID != "m" {
			t.Fatalf("got %s", m.UUID)
		}
		d := time.Since(start)
		m.Ack()
		if version := serverVersion(t, url); !strings.HasPrefix(version, "2.9.") && d > time.Second {
			t.Errorf("NATS %s: given back after %v, want at once", version, d)
		} else {
			t.Logf("NATS %s: given back after %v", version, d)
		}
	})
}

func serverVersion(t *testing.T, url string) string {
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	return nc.ConnectedServerVersion()
}

// TestPoisonQueueRouter runs the relay's middleware (poison queue on events.poison, retries,
// recoverer) on the bus: a message its handler can never take ends on events.poison with the
// reason; the others are handled once each; the backlog drains to zero.
func TestPoisonQueueRouter(t *testing.T) {
	eachServer(t, func(t *testing.T, url, prefix string) {
		pub, sub := newPubSub(t, testConfig(url, prefix, "relay"))
		defer pub.Close()
		defer sub.Close()
		bad := errors.New("malformed")
		router, err := message.NewRouter(message.RouterConfig{CloseTimeout: 10 * time.Second}, watermill.NopLogger{})
		if err != nil {
			t.Fatal(err)
		}
		poison, err := middleware.PoisonQueueWithFilter(pub, "events.poison", func(err error) bool { return errors.Is(err, bad) })
		if err != nil {
			t.Fatal(err)
		}
		router.AddMiddleware(poison, middleware.Retry{MaxRetries: 2, InitialInterval: time.Millisecond}.Middleware, middleware.Recoverer)
		handled := make(chan string, 10)
		failedOnce := false
		router.AddConsumerHandler("fan-out", "events", sub, func(m *message.Message) error {
			switch {
			case m.UUID == "bad":
				return bad
			case m.UUID == "flaky" && !failedOnce:
				failedOnce = true
				return errors.New("store busy")
			}
			handled <- m.UUID
			return nil
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- router.Run(ctx) }()
		defer func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		}()
		publish(t, pub, "events", "ok1", "bad", "flaky", "ok2")
		var got []string
		for range 3 {
			select {
			case id := <-handled:
				got = append(got, id)
			case <-time.After(10 * time.Second):
				t.Fatalf("handled %v only", got)
			}
		}
		if !slices.Equal(got, []string{"ok1", "flaky", "ok2"}) {
			t.Errorf("handled %v, want [ok1 flaky ok2]", got)
		}
		p := receive(t, subscribe(t, sub, "events.poison"), 10*time.Second)
		if p.UUID != "bad" || !strings.Contains(p.Metadata.Get(middleware.ReasonForPoisonedKey), "malformed") {
			t.Errorf("poisoned %s %v", p.UUID, p.Metadata)
		}
		p.Ack()
		waitBacklog(t, sub, "events", 0)
		waitBacklog(t, sub, "events.poison", 0)
	})
}

// TestInFlightBound: a subscription hands out its bus.max_in_flight messages at once, none
// acked, and not one more until one is acked (even when the group's consumer allows more);
// then the rest, each once.
func TestInFlightBound(t *testing.T) {
	for _, inFlight := range []int{2, 10, 100} {
		t.Run(strconv.Itoa(inFlight), func(t *testing.T) {
			url := natstest.Embedded(t)
			cfg := testConfig(url, natstest.Prefix(t, url), "relay")
			cfg.MaxInFlight = inFlight
			cfg.AckWait = time.Minute // held messages are not delivered again
			pub, sub := newPubSub(t, cfg)
			defer pub.Close()
			defer sub.Close()
			total := inFlight + 5
			var ids []string
			for i := range total {
				ids = append(ids, fmt.Sprintf("m%03d", i))
			}
			publish(t, pub, "events", ids...)
			ch := subscribe(t, sub, "events")
			// Another replica configured with more in flight raises the group's allowance on
			// the server: this subscription still hands out no more than its own.
			wide := cfg
			wide.MaxInFlight = 1000
			other, err := natsbus.NewSubscriber(wide, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			if err := other.SubscribeInitialize("events"); err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			var held []*message.Message
			for range inFlight {
				m := receive(t, ch, 10*time.Second)
				seen[m.UUID] = true
				held = append(held, m)
			}
			nothing(t, ch, 300*time.Millisecond) // max_in_flight are out
			held[0].Ack()
			m := receive(t, ch, 10*time.Second)
			seen[m.UUID] = true
			held = append(held[1:], m)
			for _, m := range held {
				m.Ack()
			}
			for len(seen) < total {
				m := receive(t, ch, 10*time.Second)
				if seen[m.UUID] {
					t.Fatalf("%s delivered twice", m.UUID)
				}
				seen[m.UUID] = true
				m.Ack()
			}
			waitBacklog(t, sub, "events", 0)
		})
	}
}
