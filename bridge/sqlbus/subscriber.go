package sqlbus

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	watermillsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/message"
)

// ErrClosed is returned by Subscribe after Close.
var ErrClosed = errors.New("bus: subscriber closed")

// Config configures a Subscriber.
type Config struct {
	// ConsumerGroup names the group; each group receives every message once (at least once),
	// shared among the group's subscribers. Empty is a group of its own name "".
	ConsumerGroup string
	// Lease is how long a subscriber holds its group's reading lease without renewing it; a
	// crashed reader's group resumes after at most this long (default 30 s). The lease is
	// renewed every Lease/3 while a handler runs.
	Lease time.Duration
	// PollInterval is the wait between looks for new messages when there were none (default 1 s).
	PollInterval time.Duration
	// ResendInterval is the wait before a nacked message is sent again (default 1 s).
	ResendInterval time.Duration
	// RetryInterval is the wait after a database error (default 1 s).
	RetryInterval time.Duration
	// BatchSize is how many messages one lease read takes (default 100).
	BatchSize int
	// InFlight is how many messages of a batch are handed out before the first is acked
	// (default 1: one at a time, in order). Above 1, a handler that group-commits (the relay's
	// fan-out) gets many messages at once, in offset order; a nacked one is handed out again
	// after ResendInterval, after later ones. The offset moves past a message only once it and
	// every message before it are acked.
	InFlight int
	// InitializeSchema creates a topic's tables on Subscribe.
	InitializeSchema bool
}

func (c *Config) setDefaults() {
	if c.Lease == 0 {
		c.Lease = 30 * time.Second
	}
	if c.PollInterval == 0 {
		c.PollInterval = time.Second
	}
	if c.ResendInterval == 0 {
		c.ResendInterval = time.Second
	}
	if c.RetryInterval == 0 {
		c.RetryInterval = time.Second
	}
	if c.BatchSize == 0 {
		c.BatchSize = 100
	}
	if c.InFlight == 0 {
		c.InFlight = 1
	}
}

// Validate reports the first setting that cannot work.
func (c Config) Validate() error {
	switch {
	case c.Lease < 10*time.Millisecond:
		return fmt.Errorf("bus: lease %s is below 10ms", c.Lease)
	case c.PollInterval <= 0, c.ResendInterval <= 0, c.RetryInterval <= 0:
		return errors.New("bus: poll, resend and retry intervals must be positive")
	case c.BatchSize < 1:
		return fmt.Errorf("bus: batch size %d is below 1", c.BatchSize)
	case c.InFlight < 1:
		return fmt.Errorf("bus: in-flight %d is below 1", c.InFlight)
	}
	return nil
}

// Subscriber reads topics for one consumer group under a lease (see the package comment).
type Subscriber struct {
	db      *sql.DB
	cfg     Config
	dialect Dialect
	schema  watermillsql.SchemaAdapter
	offsets watermillsql.OffsetsAdapter
	id      string
	logger  watermill.LoggerAdapter

	seq     atomic.Int64
	mu      sync.Mutex
	closed  bool
	closing chan struct{}
	wake    chan struct{} // closed by Nudge (nudge.go)
	wg      sync.WaitGroup
}

var (
	_ message.Subscriber           = (*Subscriber)(nil)
	_ message.SubscribeInitializer = (*Subscriber)(nil)
)

// NewSubscriber returns a Subscriber reading db in dialect's tables. It fails on a nil db or
// dialect, or an invalid config.
func NewSubscriber(db *sql.DB, dialect Dialect, cfg Config, logger watermill.LoggerAdapter) (*Subscriber, error) {
	if db == nil || dialect == nil {
		return nil, errors.New("bus: db or dialect is nil")
	}
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = watermill.NopLogger{}
	}
	id := watermill.NewULID()
	return &Subscriber{db: db, cfg: cfg, dialect: dialect, schema: dialect.Schema(cfg.BatchSize), offsets: dialect.Offsets(), id: id,
		logger: logger.With(watermill.LogFields{"subscriber_id": id}), closing: make(chan struct{})}, nil
}

// execer is what runs the package's own statements: a *sql.DB, *sql.Conn or *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// SubscribeInitialize implements message.SubscribeInitializer.
func (s *Subscriber) SubscribeInitialize(topic string) error {
	if err := ValidTopic(topic); err != nil {
		return err
	}
	return s.dialect.Initialize(context.Background(), s.db, topic)
}

// Subscribe starts reading topic for the configured group. The channel closes when ctx ends or
// the subscriber closes; a message handed out and not yet acked is then read again later.
func (s *Subscriber) Subscribe(ctx context.Context, topic string) (<-chan *message.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if err := ValidTopic(topic); err != nil {
		return nil, err
	}
	if s.cfg.InitializeSchema {
		if err := s.dialect.Initialize(ctx, s.db, topic); err != nil {
			return nil, err
		}
	}
	before, err := s.offsets.BeforeSubscribingQueries(watermillsql.BeforeSubscribingQueriesParams{Topic: topic, ConsumerGroup: s.cfg.ConsumerGroup})
	if err != nil {
		return nil, fmt.Errorf("bus: subscribe %s: %w", topic, err)
	}
	for _, q := range before {
		if _, err := s.db.ExecContext(ctx, q.Query, q.Args...); err != nil {
			return nil, fmt.Errorf("bus: subscribe %s: %w", topic, err)
		}
	}
	r := &reader{s: s, topic: topic, holder: fmt.Sprintf("%s/%d", s.id, s.seq.Add(1)), out: make(chan *message.Message),
		log: s.logger.With(watermill.LogFields{"topic": topic, "consumer_group": s.cfg.ConsumerGroup})}
	ctx, cancel := context.WithCancel(ctx)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		defer close(r.out)
		r.run(ctx)
	}()
	return r.out, nil
}

// Backlog reports how many messages of topic the group has not acked yet.
func (s *Subscriber) Backlog(ctx context.Context, topic string) (int, error) {
	if err := ValidTopic(topic); err != nil {
		return 0, err
	}
	q := s.dialect.BacklogQuery(topic, s.cfg.ConsumerGroup)
	var n int
	if err := s.db.QueryRowContext(ctx, q.Query, q.Args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("bus: backlog of %s: %w", topic, err)
	}
	return n, nil
}

// Close stops every reader, gives their leases up and waits for them.
func (s *Subscriber) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.closing)
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

// ValidTopic applies watermill-sql's rule for topic names (they become table names).
func ValidTopic(topic string) error {
	if topic == "" {
		return errors.New("bus: empty topic")
	}
	for _, r := range topic {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '$' || r == ':' || r == '.' || r == '_') {
			return fmt.Errorf("bus: topic %q: only letters, digits and - $ : . _ are allowed", topic)
		}
	}
	return nil
}
