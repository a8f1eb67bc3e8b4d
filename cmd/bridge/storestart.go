package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/transcript-bridge/bridge/bridge/postgres"
)

// openStoreWaiting is openDatabase for bridge run. On PostgreSQL, without --once, a server that
// cannot be reached yet (down, starting up, shutting down, or out of connection slots: "too many
// clients") is waited for, as the running bridge waits out an outage: one WARN "store
// unreachable" with the error, a new try with backoff (1 s doubling to 4 s, as the running
// bridge's watcher pings: one connection attempt each), and one INFO
// "store reachable again" with how long it was away and how many tries failed. A replica
// started beside its database, or while the server has no connection to spare, then starts
// instead of exiting. What waiting cannot mend fails at once: a DSN that cannot be read, a
// refused password or role, a database that does not exist, a TLS handshake that fails, a
// failed migration. bridge run --once, a batch job, fails at once too. Stopped while waiting
// (ctx done), it returns errStoppedWaiting.
func openStoreWaiting(ctx context.Context, cfg *Config, once bool, log *slog.Logger) (database, error) {
	var since time.Time
	failures := 0
	for wait := time.Second; ; wait = min(2*wait, 4*time.Second) {
		db, err := openDatabase(ctx, cfg)
		if err == nil {
			if failures > 0 {
				log.Info("store reachable again", slog.Duration("away", time.Since(since).Round(time.Millisecond)), slog.Int("failures", failures))
			}
			return db, nil
		}
		if once || cfg.Store.Driver != "postgres" || !storeNotYet(err) {
			return nil, err
		}
		if failures == 0 {
			since = time.Now()
			log.Warn("store unreachable; bridge run waits for it with backoff", "store", describeStore(cfg), "error", err)
		}
		failures++
		select {
		case <-ctx.Done():
			return nil, errStoppedWaiting
		case <-time.After(wait):
		}
	}
}

// errStoppedWaiting is openStoreWaiting's answer when the bridge is stopped while it waits.
var errStoppedWaiting = errors.New("stopped while waiting for the store")

// stoppedWaiting is bridge run's end when openStoreWaiting failed with err: a stop while it
// waited is a clean one (nil, logged); any other error is returned.
func stoppedWaiting(err error, log *slog.Logger) error {
	if errors.Is(err, errStoppedWaiting) {
		log.Info("bridge stopped while waiting for the store")
		return nil
	}
	return err
}

// storeNotYet reports whether err, from opening a PostgreSQL store, may go away by waiting:
// the server unreachable (postgres.Unreachable) or out of connection slots (SQLSTATE 53300:
// "too many clients already", or a role's own limit, which an operator may raise), and not
// refused for a reason of the DSN's or the server's set-up: pgconn wraps every error of a
// connection attempt as a ConnectError, which Unreachable accepts, a wrong password or a
// certificate that does not verify among them.
func storeNotYet(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "53300" || strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	var (
		verify    *tls.CertificateVerificationError
		record    tls.RecordHeaderError
		authority x509.UnknownAuthorityError
		host      x509.HostnameError
		invalid   x509.CertificateInvalidError
	)
	if errors.As(err, &verify) || errors.As(err, &record) || errors.As(err, &authority) || errors.As(err, &host) ||
		errors.As(err, &invalid) || strings.Contains(err.Error(), "server refused TLS connection") {
		return false
	}
	return postgres.Unreachable(err)
}
