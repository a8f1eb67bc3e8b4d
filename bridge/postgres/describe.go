package postgres

import (
	"net"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Describe names the database dsn points at for people and logs: "postgres host:port/name",
// never a user's password, whatever form the DSN takes (URL or key=value); "postgres" alone when
// the DSN cannot be read (Open then says why).
func Describe(dsn string) string {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "postgres"
	}
	return where(cfg.Config)
}

// where is Describe of a parsed configuration.
func where(cfg pgconn.Config) string {
	return "postgres " + net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))) + "/" + cfg.Database
}
