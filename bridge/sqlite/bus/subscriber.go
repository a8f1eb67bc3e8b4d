package bus

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	watermillsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/mattn/go-sqlite3"

	"github.com/transcript-bridge/bridge/bridge/sqlbus"
)

// ErrClosed is returned by Subscribe after Close.
var ErrClosed = sqlbus.ErrClosed

// SubscriberConfig configures a Subscriber (see sqlbus.Config).
type SubscriberConfig = sqlbus.Config

// Subscriber is the lease-based subscriber of package sqlbus on this package's tables.
type Subscriber = sqlbus.Subscriber

// NewSubscriber returns a Subscriber reading db. It fails on a nil db or an invalid config.
func NewSubscriber(db *sql.DB, cfg SubscriberConfig, logger watermill.LoggerAdapter) (*Subscriber, error) {
	return sqlbus.NewSubscriber(db, Dialect{}, cfg, logger)
}

// execer is what runs the package's own statements: a *sql.DB, *sql.Conn or *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// NewPublisher returns watermill-sql's Publisher writing with this package's schema to db: a
// *sql.DB (wrapped by watermillsql.BeginnerFromStdSQL), or a *sql.Tx (wrapped by
// watermillsql.TxFromStdSQL) so that the message exists only if the transaction commits. It
// fails only on a nil db.
func NewPublisher(db watermillsql.ContextExecutor, logger watermill.LoggerAdapter) (*watermillsql.Publisher, error) {
	pub, err := watermillsql.NewPublisher(db, watermillsql.PublisherConfig{SchemaAdapter: SchemaAdapter{}}, logger)
	if err != nil {
		return nil, fmt.Errorf("bus: %w", err)
	}
	return pub, nil
}

// InitializeSchema creates topic's tables in db (a *sql.DB or *sql.Tx) when missing. It fails on
// an invalid topic name or a database error.
func InitializeSchema(ctx context.Context, db execer, topic string) error {
	if err := sqlbus.ValidTopic(topic); err != nil {
		return err
	}
	messages, _ := SchemaAdapter{}.SchemaInitializingQueries(watermillsql.SchemaInitializingQueriesParams{Topic: topic})
	offsets, _ := OffsetsAdapter{}.SchemaInitializingQueries(watermillsql.OffsetsSchemaInitializingQueriesParams{Topic: topic})
	qs := append(messages, offsets...)
	for _, q := range qs {
		// A schema change racing another connection's write can be refused at once ("database
		// is locked", without the busy timeout's wait): it is tried again for a few seconds.
		for wait := 5 * time.Millisecond; ; wait *= 2 {
			_, err := db.ExecContext(ctx, q.Query, q.Args...)
			var se sqlite3.Error
			if errors.As(err, &se) && se.Code == sqlite3.ErrBusy && wait < 3*time.Second {
				time.Sleep(wait)
				continue
			}
			if err != nil {
				return fmt.Errorf("bus: initialize topic %s: %w", topic, err)
			}
			break
		}
	}
	return nil
}
