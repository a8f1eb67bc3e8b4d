package postgres_test

import (
	"testing"

	"github.com/transcript-bridge/bridge/bridge/postgres"
)

func TestDescribeNeverShowsThePassword(t *testing.T) {
	for _, tc := range []struct{ dsn, want string }{
		{"postgres://bridge:s3cret@db.internal:6432/bridge?sslmode=require", "postgres db.internal:6432/bridge"},
		{"postgres://db.internal/bridge?user=bridge&password=s3cret", "postgres db.internal:5432/bridge"},
		{"host=db.internal port=6432 dbname=bridge user=bridge password=s3cret", "postgres db.internal:6432/bridge"},
		{"host=db.internal dbname=bridge password='s3 cret'", "postgres db.internal:5432/bridge"},
		{"postgres://bridge:s3cret@[::1", "postgres"},
	} {
		if got := postgres.Describe(tc.dsn); got != tc.want {
			t.Errorf("Describe(%q) = %q, want %q", tc.dsn, got, tc.want)
		}
	}
}
