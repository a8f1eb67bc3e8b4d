package natsbus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// setupTimeout bounds connecting and creating the stream or a consumer.
const setupTimeout = 30 * time.Second

// connect opens a connection of its own for a publisher or subscriber (watermill-nats closes
// the connection with the publisher or subscriber) and makes sure the stream exists. A server
// that cannot be reached fails at once; once connected, the client reconnects for ever.
func connect(ctx context.Context, cfg *Config, role string) (*nats.Conn, jetstream.JetStream, error) {
	nc, err := nats.Connect(cfg.URL,
		nats.Name("transcript-bridge "+role),
		nats.Timeout(5*time.Second),
		nats.MaxReconnects(-1),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("bus.url: connect to %s: %w", redactList(cfg.URL), err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	if err := ensureStream(ctx, js, cfg); err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// streamConfig is the stream this package creates when none exists.
func streamConfig(cfg *Config) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        cfg.Stream,
		Description: "transcript-bridge event bus",
		Subjects:    []string{cfg.SubjectPrefix + ".>"},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		MaxAge:      cfg.MaxAge,
		Replicas:    cfg.Replicas,
		Duplicates:  min(2*time.Minute, cfg.MaxAge),
	}
}

// ensureStream creates the stream, or checks that the existing one holds the prefix's
// subjects. Replicas racing to create it with the same settings all succeed.
func ensureStream(ctx context.Context, js jetstream.JetStream, cfg *Config) error {
	want := streamConfig(cfg)
	_, err := js.CreateStream(ctx, want)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, jetstream.ErrJetStreamNotEnabled), errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount),
		errors.Is(err, nats.ErrNoResponders): // no JetStream API on the server
		return fmt.Errorf("bus.url: %s has no JetStream: %w (start nats-server with -js)", redactList(cfg.URL), err)
	case !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse):
		return fmt.Errorf("bus.stream: create %s for %s: %w", cfg.Stream, want.Subjects[0], err)
	}
	// It exists with other settings: use it as it is if it holds our subjects.
	s, err := js.Stream(ctx, cfg.Stream)
	if err != nil {
		return fmt.Errorf("bus.stream: %s: %w", cfg.Stream, err)
	}
	if subjects := s.CachedInfo().Config.Subjects; !slices.Contains(subjects, want.Subjects[0]) {
		return fmt.Errorf("bus.stream: stream %s exists with subjects %v, not %s (set bus.stream or bus.subject_prefix)",
			cfg.Stream, subjects, want.Subjects[0])
	}
	return nil
}

// subject is the subject of topic: <prefix>.<topic>.
func subject(cfg *Config, topic string) (string, error) {
	if err := validSubject(topic); err != nil {
		return "", fmt.Errorf("natsbus: topic %q: %w", topic, err)
	}
	return cfg.SubjectPrefix + "." + topic, nil
}

// consumerName is the durable consumer of group on topic: both escaped (a name holds no dot),
// joined by "__", which an escaped string never holds.
func consumerName(group, topic string) string {
	return escape(group) + "__" + escape(topic)
}

// escape keeps ASCII letters, digits and '-', and writes every other byte as _XX (hex): a
// one-to-one mapping onto characters valid in a consumer name.
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "_%02x", c)
		}
	}
	return b.String()
}
