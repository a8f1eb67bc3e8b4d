package bus

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/ThreeDotsLabs/watermill"
	watermillsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"

	"github.com/transcript-bridge/bridge/bridge/sqlbus"
)

// ErrClosed is returned by Subscribe after Close.
var ErrClosed = sqlbus.ErrClosed

// SubscriberConfig configures a Subscriber (see sqlbus.Config).
type SubscriberConfig = sqlbus.Config

// Subscriber is the lease-based subscriber of package sqlbus on this package's tables.
type Subscriber = sqlbus.Subscriber

// NewSubscriber returns a Subscriber reading db for cfg's consumer group. It fails on a nil db
// or an invalid config.
func NewSubscriber(db *sql.DB, cfg SubscriberConfig, logger watermill.LoggerAdapter) (*Subscriber, error) {
	return sqlbus.NewSubscriber(db, Dialect{}, cfg, logger)
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
// store's topics), in one transaction under watermill-sql's advisory lock. It fails on an
// invalid topic name or a database error.
func InitializeSchema(ctx context.Context, db *sql.DB, topic string) error {
	if err := sqlbus.ValidTopic(topic); err != nil {
		return err
	}
	messages, err := SchemaAdapter(0).SchemaInitializingQueries(watermillsql.SchemaInitializingQueriesParams{Topic: topic})
	if err != nil {
		return fmt.Errorf("bus: initialize topic %s: %w", topic, err)
	}
	offsets, err := OffsetsAdapter().SchemaInitializingQueries(watermillsql.OffsetsSchemaInitializingQueriesParams{Topic: topic})
	if err != nil {
		return fmt.Errorf("bus: initialize topic %s: %w", topic, err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("bus: initialize topic %s: %w", topic, err)
	}
	defer tx.Rollback()
	for _, q := range append(messages, offsets...) {
		if _, err := tx.ExecContext(ctx, q.Query, q.Args...); err != nil {
			return fmt.Errorf("bus: initialize topic %s: %w", topic, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("bus: initialize topic %s: %w", topic, err)
	}
	return nil
}
