package natsbus

import (
	"context"
	"fmt"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
)

// Outbox is the bus a Forwarder reads: the store's own (its writes publish there, on their
// transaction), which can say how many messages of a topic its group has not acked.
type Outbox interface {
	message.Subscriber
	// Backlog reports how many messages of topic the subscriber's group has not acked.
	Backlog(ctx context.Context, topic string) (int, error)
}

// Forwarder carries the messages of one topic from the store's outbox to NATS: each message is
// acked on the outbox only once JetStream has stored it, so a crash forwards it again (and
// Nats-Msg-Id lets JetStream drop the copy within its duplicate window).
type Forwarder struct {
	from   Outbox
	topic  string
	router *message.Router
	done   chan error
	cancel context.CancelFunc
}

// Forward starts carrying topic from from to to, until Close. It fails when the router cannot
// start.
func Forward(ctx context.Context, from Outbox, to message.Publisher, topic string, logger watermill.LoggerAdapter) (*Forwarder, error) {
	if logger == nil {
		logger = watermill.NopLogger{}
	}
	r, err := message.NewRouter(message.RouterConfig{CloseTimeout: 10 * time.Second}, logger)
	if err != nil {
		return nil, fmt.Errorf("forward %s to NATS: %w", topic, err)
	}
	r.AddConsumerHandler("forward-"+topic, topic, borrowed{from}, func(m *message.Message) error {
		return to.Publish(topic, m)
	})
	ctx, cancel := context.WithCancel(ctx)
	f := &Forwarder{from: from, topic: topic, router: r, done: make(chan error, 1), cancel: cancel}
	go func() { f.done <- r.Run(ctx) }()
	select {
	case <-r.Running():
		return f, nil
	case err := <-f.done:
		cancel()
		return nil, fmt.Errorf("forward %s to NATS: %w", topic, err)
	}
}

// Drain waits until the outbox holds no message of the topic that was not forwarded. It fails
// when ctx ends first or the backlog cannot be read.
func (f *Forwarder) Drain(ctx context.Context) error {
	for {
		n, err := f.from.Backlog(ctx, f.topic)
		if err != nil {
			return fmt.Errorf("forward %s to NATS: %w", f.topic, err)
		}
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("forward %s to NATS: %d messages left: %w", f.topic, n, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Close stops forwarding once the message in hand is settled, and returns the router's error.
// It leaves the outbox and the publisher open.
func (f *Forwarder) Close() error {
	f.cancel()
	err := <-f.done
	f.done <- err // a second Close returns the same
	return err
}

// borrowed keeps the router from closing a subscriber it does not own.
type borrowed struct{ message.Subscriber }

// Close implements message.Subscriber and leaves the subscriber open.
func (borrowed) Close() error { return nil }
