package postgres

import (
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unreachable reports whether err says the server could not be reached or went away: a
// connection refused or cut, a server shutting down or starting up (SQLSTATE class 08, 57P01,
// 57P02, 57P03). Such an error is an outage of the store, not a fault of the statement: the
// same statement succeeds once the server is back. Errors flattened to text are recognised by
// the words pgx and net use.
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	var ne *net.OpError
	if errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) {
		return true
	}
	return UnreachableText(err.Error())
}

// unreachableWords are what pgx, database/sql and net write when the server is away.
var unreachableWords = []string{
	"connection refused", "failed to connect to", "conn closed", "unexpected EOF", "broken pipe",
	"connection reset by peer", "driver: bad connection", "SQLSTATE 57P01", "SQLSTATE 57P02",
	"SQLSTATE 57P03", "the database system is shutting down", "the database system is starting up",
	"terminating connection due to administrator command",
}

// UnreachableText is Unreachable for an error known only by its text.
func UnreachableText(s string) bool {
	for _, w := range unreachableWords {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// FromServer reports whether err is one only PostgreSQL or pgx gives about the server going
// away (a connection refused by pgx's connect, a session terminated by a shutdown, a connection
// pgx found closed), unlike the network errors Unreachable also accepts, which any other host
// can cause.
func FromServer(err error) bool {
	if err == nil {
		return false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	s := err.Error()
	for _, w := range []string{"failed to connect to", "conn closed", "SQLSTATE 08", "SQLSTATE 57P01", "SQLSTATE 57P02", "SQLSTATE 57P03"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
