package natsbus_test

import (
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/tests"

	"github.com/transcript-bridge/bridge/bridge/natsbus"
	"github.com/transcript-bridge/bridge/internal/natstest"
)

// testConfig is a bus on url under prefix for group, with the short waits of tests.
func testConfig(url, prefix, group string) natsbus.Config {
	return natsbus.Config{URL: url, SubjectPrefix: prefix, ConsumerGroup: group, AckWait: 2 * time.Second, NakDelay: 10 * time.Millisecond,
		MaxInFlight: 1} // strict order, which most tests here check; TestPubSub also runs the default, 100
}

func newPubSub(t *testing.T, cfg natsbus.Config) (*natsbus.Publisher, *natsbus.Subscriber) {
	t.Helper()
	pub, err := natsbus.NewPublisher(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := natsbus.NewSubscriber(cfg, nil)
	if err != nil {
		pub.Close()
		t.Fatal(err)
	}
	return pub, sub
}

// TestPubSub runs Watermill's universal Pub/Sub suite on an embedded server, and on the real
// one (BRIDGE_TEST_NATS_URL) under a subject prefix and stream of its own, deleted after; on
// the real one also with bus.max_in_flight 100, the default (100 messages out at once, no
// order).
func TestPubSub(t *testing.T) {
	t.Run("embedded", func(t *testing.T) {
		t.Parallel()
		runSuite(t, natstest.Embedded(t), 1)
	})
	t.Run("server", func(t *testing.T) {
		t.Parallel()
		runSuite(t, natstest.URL(t), 1)
	})
	t.Run("server/in-flight-100", func(t *testing.T) {
		t.Parallel()
		runSuite(t, natstest.URL(t), natsbus.DefaultMaxInFlight)
	})
}

func runSuite(t *testing.T, url string, inFlight int) {
	prefix := natstest.Prefix(t, url)
	constructor := func(t *testing.T, group string) (message.Publisher, message.Subscriber) {
		cfg := testConfig(url, prefix, group)
		cfg.MaxInFlight = inFlight
		return newPubSub(t, cfg)
	}
	tests.TestPubSub(t, tests.Features{
		ConsumerGroups: true,
		// One message in flight per group (bus.max_in_flight 1): in order even with several
		// subscribers in the group.
		GuaranteedOrder:                     inFlight == 1,
		GuaranteedOrderWithSingleSubscriber: inFlight == 1,
		Persistent:                          true,
	}, func(t *testing.T) (message.Publisher, message.Subscriber) { return constructor(t, "test") }, constructor)
}
