package natsbus

import (
	"context"
	"fmt"

	"github.com/ThreeDotsLabs/watermill"
	wmjs "github.com/ThreeDotsLabs/watermill-nats/v2/pkg/jetstream"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Publisher publishes Watermill messages to the stream with watermill-nats' JetStream
// publisher, each one confirmed by the server before Publish returns.
type Publisher struct {
	cfg   Config
	inner *wmjs.Publisher
}

var _ message.Publisher = (*Publisher)(nil)

// NewPublisher connects to cfg.URL and makes sure the stream exists. It fails on an invalid
// config (naming the key), an unreachable server or a server without JetStream.
func NewPublisher(cfg Config, logger watermill.LoggerAdapter) (*Publisher, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = watermill.NopLogger{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	nc, _, err := connect(ctx, &cfg, "publisher")
	if err != nil {
		return nil, err
	}
	inner, err := wmjs.NewPublisher(wmjs.PublisherConfig{
		Conn:   nc,
		Logger: logger,
		// watermill-nats v2.1.3 publishes to the Name of the stream configuration it is given:
		// Publish hands it the subject, so the Name is the subject.
		ConfigureStream: func(subject string) jetstream.StreamConfig {
			return jetstream.StreamConfig{Name: subject, Subjects: []string{subject}}
		},
	})
	if err != nil {
		nc.Close()
		return nil, err
	}
	return &Publisher{cfg: cfg, inner: inner}, nil
}

// Publish publishes messages to topic in order, each with Nats-Msg-Id set to the topic and its
// UUID (unless its metadata sets one), so that a message published again to the same topic
// within two minutes (after a crash between publishing and recording it) is stored once. The
// topic is part of the id: the stream holds every topic, and the same message may rightly go to
// two topics (the poison queue republishes a message under its UUID). It returns at the first
// failure.
func (p *Publisher) Publish(topic string, messages ...*message.Message) error {
	subj, err := subject(&p.cfg, topic)
	if err != nil {
		return err
	}
	for _, m := range messages {
		// A copy: the caller's metadata stays as it was.
		c := m.Copy()
		if c.Metadata.Get(nats.MsgIdHdr) == "" {
			c.Metadata.Set(nats.MsgIdHdr, topic+" "+m.UUID)
		}
		if err := p.inner.Publish(subj, c); err != nil {
			return fmt.Errorf("natsbus: publish %s to %s: %w", m.UUID, subj, err)
		}
	}
	return nil
}

// Close closes the publisher's connection.
func (p *Publisher) Close() error {
	return p.inner.Close()
}
