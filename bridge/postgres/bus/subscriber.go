package bus

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	watermillsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/message"
)

// SubscriberConfig configures a Subscriber.
type SubscriberConfig struct {
	// ConsumerGroup names the group; each group receives every message, shared among the
	// group's subscribers. Empty is a group of its own name "".
	ConsumerGroup string
	// AckDeadline is how long a handler may hold a message before it is sent again (default
	// 30 s). The subscriber's transaction stays open that long at most.
	AckDeadline time.Duration
	// PollInterval is the wait between looks for new messages when there were none (default 1 s).
	PollInterval time.Duration
	// ResendInterval is the wait before a nacked message is sent again (default 1 s).
	ResendInterval time.Duration
	// RetryInterval is the wait after a database error (default 1 s).
	RetryInterval time.Duration
	// BatchSize is how many messages one read takes (default 100).
	BatchSize int
	// InitializeSchema creates a topic's tables on Subscribe (the store's migrations make those
	// of bridge.EventsTopic and bridge.EventsPoisonTopic).
	InitializeSchema bool
}

func (c *SubscriberConfig) setDefaults() {
	if c.AckDeadline == 0 {
		c.AckDeadline = 30 * time.Second
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
}

// Validate reports the first setting that cannot work, or nil.
func (c SubscriberConfig) Validate() error {
	switch {
	case c.AckDeadline < 10*time.Millisecond:
		return fmt.Errorf("bus: ack deadline %s is below 10ms", c.AckDeadline)
	case c.PollInterval <= 0, c.ResendInterval <= 0, c.RetryInterval <= 0:
		return errors.New("bus: poll, resend and retry intervals must be positive")
	case c.BatchSize < 1:
		return fmt.Errorf("bus: batch size %d is below 1", c.BatchSize)
	}
	return nil
}

// Subscriber is watermill-sql's Subscriber on the bus's tables, with Backlog (it implements the
// relay's Subscriber), and a Close that returns only once every channel Subscribe returned is
// closed: watermill-sql v4.1.2's Close returns when its readers are done, a moment before each
// closes its channel (consume's deferred WaitGroup.Done runs before close(out) in Subscribe).
type Subscriber struct {
	*watermillsql.Subscriber
	db      *sql.DB
	group   string
	mu      sync.Mutex // orders Subscribe's wg.Add before Close's wg.Wait
	closed  bool
	closing chan struct{}
	wg      sync.WaitGroup
}

var (
	_ message.Subscriber           = (*Subscriber)(nil)
	_ message.SubscribeInitializer = (*Subscriber)(nil)
)

// NewSubscriber returns a Subscriber reading db for cfg's consumer group. It fails on a nil db
// or an invalid config.
func NewSubscriber(db *sql.DB, cfg SubscriberConfig, logger watermill.LoggerAdapter) (*Subscriber, error) {
	if db == nil {
		return nil, errors.New("bus: db is nil")
	}
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	deadline := cfg.AckDeadline
	sub, err := watermillsql.NewSubscriber(watermillsql.BeginnerFromStdSQL(db), watermillsql.SubscriberConfig{
		ConsumerGroup:    cfg.ConsumerGroup,
		AckDeadline:      &deadline,
		PollInterval:     cfg.PollInterval,
		ResendInterval:   cfg.ResendInterval,
		RetryInterval:    cfg.RetryInterval,
		SchemaAdapter:    SchemaAdapter(cfg.BatchSize),
		OffsetsAdapter:   OffsetsAdapter(),
		InitializeSchema: cfg.InitializeSchema,
	}, logger)
	if err != nil {
		return nil, fmt.Errorf("bus: %w", err)
	}
	return &Subscriber{Subscriber: sub, db: db, group: cfg.ConsumerGroup, closing: make(chan struct{})}, nil
}

// Subscribe starts reading topic for the group (see watermill-sql's Subscriber.Subscribe). The
// channel closes when ctx ends or the subscriber closes; a message handed out and not acked by
// then is read again later. It fails on an invalid topic, after Close, or on a database error.
func (s *Subscriber) Subscribe(ctx context.Context, topic string) (<-chan *message.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, watermillsql.ErrSubscriberClosed
	}
	in, err := s.Subscriber.Subscribe(ctx, topic)
	if err != nil {
		return nil, err
	}
	out := make(chan *message.Message)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(out)
		for m := range in {
			select {
			case out <- m:
			case <-ctx.Done(): // not handed out, so not acked: read again later
			case <-s.closing:
			}
		}
	}()
	return out, nil
}

// Close stops every subscription and returns once their channels are closed. It returns
// watermill-sql's error, if any.
func (s *Subscriber) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.closing)
	}
	s.mu.Unlock()
	err := s.Subscriber.Close()
	s.wg.Wait()
	return err
}

// NewPublisher returns watermill-sql's Publisher writing with the bus's schema to db: a *sql.DB,
// or a *sql.Tx (wrapped by watermillsql.TxFromStdSQL) so that the message exists only if the
// transaction commits. It fails only on a nil db.
func NewPublisher(db watermillsql.ContextExecutor, logger watermill.LoggerAdapter) (*watermillsql.Publisher, error) {
	pub, err := watermillsql.NewPublisher(db, watermillsql.PublisherConfig{SchemaAdapter: SchemaAdapter(0)}, logger)
	if err != nil {
		return nil, fmt.Errorf("bus: %w", err)
	}
	return pub, nil
}

// InitializeSchema creates topic's tables in db when missing (the migrations' tables for the
// store's topics). It fails on an invalid topic name or a database error.
func InitializeSchema(ctx context.Context, db *sql.DB, topic string) error {
	sub, err := NewSubscriber(db, SubscriberConfig{InitializeSchema: true}, nil)
	if err != nil {
		return err
	}
	defer sub.Close()
	if err := sub.SubscribeInitialize(topic); err != nil {
		return fmt.Errorf("bus: initialize topic %s: %w", topic, err)
	}
	return nil
}

// Backlog reports how many messages of topic the group has not acked yet: those after the
// group's position (transaction id, offset), all of them before the group's first ack. It fails
// on an invalid topic or a database error.
func (s *Subscriber) Backlog(ctx context.Context, topic string) (int, error) {
	if err := validTopic(topic); err != nil {
		return 0, err
	}
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+messagesTable(topic)+` m WHERE NOT EXISTS (
		SELECT 1 FROM `+offsetsTable(topic)+` o WHERE o.consumer_group = $1
		AND (m.transaction_id, m."offset") <= (o.last_processed_transaction_id, COALESCE(o.offset_acked, 0)))`, s.group).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("bus: backlog of %s: %w", topic, err)
	}
	return n, nil
}

// validTopic applies watermill-sql's rule for topic names (they become table names).
func validTopic(topic string) error {
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
