package natsbus

import "github.com/ThreeDotsLabs/watermill"

// New returns a Publisher and a Subscriber on the bus of cfg, each with a connection of its
// own (watermill-nats closes the connection with the publisher or subscriber). It fails on an
// invalid config (naming the key), an unreachable server or a server without JetStream.
func New(cfg Config, logger watermill.LoggerAdapter) (*Publisher, *Subscriber, error) {
	pub, err := NewPublisher(cfg, logger)
	if err != nil {
		return nil, nil, err
	}
	sub, err := NewSubscriber(cfg, logger)
	if err != nil {
		pub.Close()
		return nil, nil, err
	}
	return pub, sub, nil
}
