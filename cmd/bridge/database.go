package main

// Opening the configured store and its event bus, by driver: the one place that knows which
// packages implement them.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/natsbus"
	"github.com/transcript-bridge/bridge/bridge/postgres"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/sqlbus"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
)

// database is an opened store: the store contract, its schema version and its own bus (the
// outbox every write publishes its events on).
type database interface {
	bridge.Store
	// SchemaVersion returns the database's schema version.
	SchemaVersion(ctx context.Context) (int, error)
	// events returns a subscriber of the store's bus as cfg says (busConfig), and a publisher
	// on it (for the poison queue).
	events(cfg sqlbus.Config) (relay.Subscriber, message.Publisher, error)
}

// sqliteDB is the embedded SQLite store.
type sqliteDB struct{ *sqlite.Store }

var _ database = sqliteDB{}

func (d sqliteDB) events(cfg sqlbus.Config) (relay.Subscriber, message.Publisher, error) {
	sub, pub, err := d.Bus(cfg, nil)
	if err != nil {
		return nil, nil, err
	}
	return sub, pub, nil
}

// postgresDB is the PostgreSQL store.
type postgresDB struct{ *postgres.Store }

var _ database = postgresDB{}

func (d postgresDB) events(cfg sqlbus.Config) (relay.Subscriber, message.Publisher, error) {
	sub, pub, err := d.Bus(cfg, nil)
	if err != nil {
		return nil, nil, err
	}
	return sub, pub, nil
}

// busConfig is how consumer group reads a store's own bus (either store: both read with
// package sqlbus). The relay takes a window of events at once, polled often, under a short
// lease (relay.Bus*); the NATS forwarder (forwarderConfig) as many at once as bus.max_in_flight
// lets the relay take from NATS.
func busConfig(group string) sqlbus.Config {
	return sqlbus.Config{ConsumerGroup: group, InFlight: relay.BusInFlight, PollInterval: relay.BusPollInterval, Lease: relay.BusLease}
}

// forwarderConfig is how the NATS forwarder reads the store's bus: a window of up to
// bus.max_in_flight events (at most relay.BusInFlight), published at once; with 1 (strict
// order on NATS too) one event at a time, in order.
func forwarderConfig(maxInFlight int) sqlbus.Config {
	cfg := busConfig(forwarderGroup)
	cfg.InFlight = min(max(maxInFlight, 1), relay.BusInFlight)
	return cfg
}

// storeDSN returns the configured DSN: store.dsn, or the content of store.dsn_file.
func storeDSN(cfg *Config) (string, error) {
	if cfg.Store.DSNFile == "" {
		return cfg.Store.DSN, nil
	}
	b, err := os.ReadFile(cfg.Store.DSNFile)
	if err != nil {
		return "", fmt.Errorf("store.dsn_file: %w", err)
	}
	dsn := strings.TrimSpace(string(b))
	if dsn == "" {
		return "", fmt.Errorf("store.dsn_file: %s is empty", cfg.Store.DSNFile)
	}
	return dsn, nil
}

// openDatabase opens the configured store, migrating it to the schema this bridge carries; a
// SQLite file is created when it does not exist. It fails with an error starting with the key at
// fault (store.dsn, store.dsn_file) and never shows a password.
func openDatabase(ctx context.Context, cfg *Config) (database, error) {
	dsn, err := storeDSN(cfg)
	if err != nil {
		return nil, err
	}
	at := "store.dsn"
	if cfg.Store.DSNFile != "" {
		at = "store.dsn_file"
	}
	switch cfg.Store.Driver {
	case "postgres":
		s, err := postgres.Open(ctx, dsn)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		return postgresDB{s}, nil
	default:
		s, err := sqlite.Open(ctx, dsn)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		return sqliteDB{s}, nil
	}
}

// writerProcs gives bridge run one P more on a SQLite store, whose writer returning from C
// then finds one sooner (sqlite.WriterProcs), and returns the undo; on PostgreSQL it does
// nothing.
func writerProcs(db database) (undo func()) {
	if _, ok := db.(sqliteDB); ok {
		return sqlite.WriterProcs()
	}
	return func() {}
}

// describeStore names the configured store for logs and messages, without secrets.
func describeStore(cfg *Config) string {
	switch {
	case cfg.Store.Driver == "postgres" && cfg.Store.DSNFile != "":
		return "postgres (dsn in " + cfg.Store.DSNFile + ")"
	case cfg.Store.Driver == "postgres":
		return postgres.Describe(cfg.Store.DSN)
	}
	return cfg.Store.DSN
}

// sqliteMissing reports, for the commands that only read, a SQLite file that does not exist
// (they never create one); PostgreSQL databases are made by their administrator.
func sqliteMissing(cfg *Config) error {
	if cfg.Store.Driver != "sqlite" {
		return nil
	}
	if _, err := os.Stat(cfg.Store.DSN); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no database at %s (set store.dsn or --config)", cfg.Store.DSN)
	}
	return nil
}

// eventBus is what the relay reads and where poison goes, on the configured bus driver, with
// what must stop when the bridge stops.
type eventBus struct {
	sub    relay.Subscriber
	poison message.Publisher
	// drain forwards every event already in the store's outbox (bus.driver nats) before a
	// flush; nil on the store's own bus.
	drain func(ctx context.Context) error
	close func()
}

// The consumer groups on the store's bus: the relay's, and (bus.driver nats) the forwarder's.
const (
	relayGroup     = "relay"
	forwarderGroup = "nats-forwarder"
)

// openBus subscribes the relay to the configured bus: the store's own (bus.driver sql), or NATS
// JetStream (bus.driver nats), to which a forwarder in consumer group nats-forwarder carries
// what the store's writes publish on its own bus (the outbox stays transactional).
func openBus(ctx context.Context, cfg *Config, db database, logger watermill.LoggerAdapter) (*eventBus, error) {
	if cfg.Bus.Driver != "nats" {
		sub, poison, err := db.events(busConfig(relayGroup))
		if err != nil {
			return nil, fmt.Errorf("bus: %w", err)
		}
		return &eventBus{sub: sub, poison: poison, close: func() { sub.Close() }}, nil
	}
	ncfg, err := cfg.Bus.nats()
	if err != nil {
		return nil, err
	}
	pub, sub, err := natsbus.New(ncfg, logger)
	if err != nil {
		return nil, fmt.Errorf("bus: %w", err)
	}
	outbox, _, err := db.events(forwarderConfig(ncfg.MaxInFlight))
	if err != nil {
		pub.Close()
		sub.Close()
		return nil, fmt.Errorf("bus: %w", err)
	}
	fwd, err := natsbus.Forward(ctx, outbox, pub, bridge.EventsTopic, logger)
	if err != nil {
		outbox.Close()
		pub.Close()
		sub.Close()
		return nil, err
	}
	return &eventBus{sub: sub, poison: pub, drain: fwd.Drain, close: func() {
		fwd.Close()
		outbox.Close()
		sub.Close()
		pub.Close()
	}}, nil
}
