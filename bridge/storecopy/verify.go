package storecopy

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"hash"
	"strconv"
)

// Report is what a copy or Verify found: per table, the rows and checksum on both sides.
type Report struct {
	// From and To name the two databases (never a password).
	From string `json:"from"`
	To   string `json:"to"`
	// Tables holds one check per copied table, in copy order.
	Tables []TableCheck `json:"tables"`
	// Republished counts the pending events published again on the destination's bus.
	Republished int `json:"republished"`
}

// TableCheck compares one table on both sides.
type TableCheck struct {
	// Table is the table's name.
	Table string `json:"table"`
	// Rows and Checksum are the source's; the checksum is the SHA-256 of the rows in key order,
	// each value written out as text (see checksum).
	Rows     int64  `json:"rows"`
	Checksum string `json:"checksum"`
	// DestinationRows and DestinationChecksum are the destination's.
	DestinationRows     int64  `json:"destination_rows"`
	DestinationChecksum string `json:"destination_checksum"`
	// OK is true when both are equal.
	OK bool `json:"ok"`
}

// OK reports whether every table is the same on both sides.
func (r *Report) OK() bool { return len(r.differing()) == 0 }

// differing lists the tables whose rows or checksum differ.
func (r *Report) differing() []string {
	var bad []string
	for _, c := range r.Tables {
		if !c.OK {
			bad = append(bad, c.Table)
		}
	}
	return bad
}

// Verify compares every copied table of from and to (rows and checksum, see TableCheck),
// reading each outside any transaction. It returns the report, with an error wrapping
// ErrMismatch when a table differs; it fails on a read error.
func Verify(ctx context.Context, from, to *Database) (*Report, error) {
	report, err := verify(ctx, from.DB(), from.dialect, to.DB(), to.dialect)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	report.From, report.To = from.String(), to.String()
	if bad := report.differing(); len(bad) > 0 {
		return report, fmt.Errorf("verify %s against %s: %w in %v", to, from, ErrMismatch, bad)
	}
	return report, nil
}

// verify computes every table's rows and checksum on both sides.
func verify(ctx context.Context, src queryer, from dialect, dst queryer, to dialect) (*Report, error) {
	report := &Report{}
	for _, t := range Tables {
		n, sum, err := checksum(ctx, src, from, t)
		if err != nil {
			return nil, fmt.Errorf("%s of the source: %w", t.name, err)
		}
		dn, dsum, err := checksum(ctx, dst, to, t)
		if err != nil {
			return nil, fmt.Errorf("%s of the destination: %w", t.name, err)
		}
		report.Tables = append(report.Tables, TableCheck{Table: t.name, Rows: n, Checksum: sum,
			DestinationRows: dn, DestinationChecksum: dsum, OK: n == dn && sum == dsum})
	}
	return report, nil
}

// checksum returns how many rows t holds in q's database and the hex SHA-256 of them in key
// order, each value written out by kind so that both databases give the same bytes for the
// same values: text as s<length>:<bytes>;, integers as i<decimal>;, floats as f<shortest
// decimal that reads back the same>;, NULL as n;, each row ending in a newline. Seeded rows
// count as any other.
func checksum(ctx context.Context, q queryer, d dialect, t Table) (int64, string, error) {
	h := sha256.New()
	var n int64
	buf := make([]byte, 0, 256)
	err := eachRow(ctx, q, d, t, func(r row) error {
		buf = r.appendText(buf[:0])
		h.Write(buf)
		n++
		return nil
	})
	if err != nil {
		return 0, "", err
	}
	return n, sum(h), nil
}

func sum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

// appendText appends the row as the checksum reads it (see checksum).
func (r row) appendText(b []byte) []byte {
	for _, t := range r.targets {
		switch v := t.(type) {
		case *sql.NullString:
			if !v.Valid {
				b = append(b, "n;"...)
				continue
			}
			b = append(b, 's')
			b = strconv.AppendInt(b, int64(len(v.String)), 10)
			b = append(b, ':')
			b = append(b, v.String...)
		case *sql.NullFloat64:
			if !v.Valid {
				b = append(b, "n;"...)
				continue
			}
			b = append(b, 'f')
			b = strconv.AppendFloat(b, v.Float64, 'g', -1, 64)
		case *sql.NullInt64:
			if !v.Valid {
				b = append(b, "n;"...)
				continue
			}
			b = append(b, 'i')
			b = strconv.AppendInt(b, v.Int64, 10)
		}
		b = append(b, ';')
	}
	return append(b, '\n')
}
