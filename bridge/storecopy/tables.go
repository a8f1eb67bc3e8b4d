package storecopy

import (
	"strconv"
	"strings"
)

// kind is how a column's values are read, written and written out for the checksum.
type kind int

const (
	textCol    kind = iota // TEXT
	intCol                 // INTEGER / BIGINT (times are Unix nanoseconds)
	realCol                // REAL / DOUBLE PRECISION
	nullIntCol             // INTEGER / BIGINT that may be NULL
)

// column is one column of a copied table.
type column struct {
	name string
	kind kind
	// sqlite is the column's expression in SQLite when it differs from name: jobs.seq is
	// PostgreSQL's insertion order, which SQLite keeps as the rowid.
	sqlite string
}

// Table describes one copied table: its name, its primary key (the copy's and the checksum's
// order) and its columns.
type Table struct {
	name string
	key  []string
	cols []column
	// seeded is the condition of the rows the migrations put in a fresh database (the mapping
	// generation's row): such rows do not make a database non-empty, and the copy replaces them.
	seeded string
	// identity names the column that PostgreSQL numbers with an identity, whose sequence the copy
	// moves past the copied maximum.
	identity string
}

// Name returns the table's name.
func (t Table) Name() string { return t.name }

// cols builds columns of kind k.
func cols(k kind, names ...string) []column {
	out := make([]column, len(names))
	for i, n := range names {
		out[i] = column{name: n, kind: k}
	}
	return out
}

// concat joins column lists, in order.
func concat(lists ...[]column) []column {
	var out []column
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// Tables are the tables a copy moves, in the order it moves them (a row's references first),
// with the same columns in both stores (bridge/sqlite/migrations and bridge/postgres/migrations;
// TestTablesMatchTheSchemas holds them to it). Not copied: leases (held by running replicas:
// they run out), the bus's watermill_* tables (their schemas differ between the stores: pending
// events are published again instead) and the migrations' own records.
var Tables = []Table{
	{name: "meta", key: []string{"key"}, cols: cols(textCol, "key", "value")},
	{name: "mapping_changes", key: []string{"id"}, seeded: "generation = 0 AND reason = '' AND changed_at = 0",
		cols: concat(cols(intCol, "id", "generation"), cols(textCol, "reason"), cols(intCol, "changed_at"))},
	{name: "cursors", key: []string{"source"}, cols: concat(cols(textCol, "source", "cursor"), cols(intCol, "updated_at"))},
	{name: "jobs", key: []string{"id"}, identity: "seq", cols: concat(
		cols(textCol, "id", "source", "item_id", "version", "recording", "state", "reason", "author", "external_id", "metadata",
			"idempotency_key"),
		cols(intCol, "attempt_at", "attempts"), cols(textCol, "transcription_id"), cols(realCol, "required_minutes"),
		cols(intCol, "next_at", "created_at", "updated_at"), cols(textCol, "hold"), cols(intCol, "revision"),
		[]column{{name: "seq", kind: intCol, sqlite: "rowid"}})},
	{name: "job_history", key: []string{"seq"}, identity: "seq", cols: concat(cols(intCol, "seq"),
		cols(textCol, "job_id", "from_state", "to_state", "reason"), cols(intCol, "at"))},
	{name: "outbox", key: []string{"id"}, identity: "id", cols: concat(cols(intCol, "id"),
		cols(textCol, "type", "job_id", "transcription_id", "data"), cols(intCol, "created_at"), cols(nullIntCol, "delivered_at"))},
	{name: "deliveries", key: []string{"id"}, cols: concat(cols(textCol, "id"), cols(intCol, "event_id"),
		cols(textCol, "endpoint", "webhook_id", "type", "job_id", "transcription_id", "data"), cols(intCol, "event_at"),
		cols(textCol, "status"), cols(intCol, "attempts", "next_attempt_at", "lease_until", "last_status"), cols(textCol, "last_error"),
		cols(intCol, "created_at", "updated_at"))},
	{name: "delivery_attempts", key: []string{"seq"}, identity: "seq", cols: concat(cols(intCol, "seq"),
		cols(textCol, "delivery_id"), cols(intCol, "at", "status"), cols(realCol, "latency_ms"), cols(textCol, "response", "error", "endpoint"))},
	{name: "endpoint_state", key: []string{"name"}, cols: concat(cols(textCol, "name"), cols(intCol, "disabled_at"), cols(textCol, "reason"))},
	{name: "export_runs", key: []string{"export", "tick"}, cols: concat(cols(textCol, "export"),
		cols(intCol, "tick"), cols(textCol, "status"), cols(intCol, "lease_until", "window_from", "window_to"), cols(textCol, "location"),
		cols(intCol, "listed", "exported", "skipped"), cols(textCol, "error"), cols(intCol, "started_at", "finished_at"))},
	{name: "export_checkpoints", key: []string{"export"}, cols: concat(cols(textCol, "export"), cols(intCol, "until", "updated_at"))},
	{name: "export_items", key: []string{"export", "transcription_id"},
		cols: concat(cols(textCol, "export", "transcription_id"), cols(intCol, "tick"))},
	{name: "audit_log", key: []string{"id"}, identity: "id", cols: concat(cols(intCol, "id", "at"),
		cols(textCol, "who", "action", "targets", "detail", "error"))},
	{name: "endpoint_alerts", key: []string{"name"}, cols: concat(cols(textCol, "name"), cols(intCol, "since", "alerted_at"),
		cols(textCol, "error"))},
	{name: "tombstones", key: []string{"job_id"}, cols: concat(cols(textCol, "job_id", "source", "item_id", "dedupe_key", "external_id",
		"transcription_id", "reason"), cols(intCol, "created_at"))},
}

// notCopied are the tables whose rows make a destination non-empty although the copy does not
// move them: a lease means a bridge ran on the database.
var notCopied = []string{"leases"}

// dialect is what differs between the two databases in the SQL the copy writes.
type dialect struct {
	name string
	// postgres: placeholders are $n, text sorts in byte order only with COLLATE "C", and
	// identities have sequences.
	postgres bool
}

var (
	sqliteDialect   = dialect{name: "sqlite"}
	postgresDialect = dialect{name: "postgres", postgres: true}
)

// quote returns name as a quoted identifier (both databases quote with double quotes).
func quote(name string) string { return `"` + name + `"` }

// expr returns the SQL expression of c in d.
func (d dialect) expr(c column) string {
	if !d.postgres && c.sqlite != "" {
		return c.sqlite
	}
	return quote(c.name)
}

// placeholder returns the i-th (from 1) parameter's placeholder.
func (d dialect) placeholder(i int) string {
	if d.postgres {
		return "$" + strconv.Itoa(i)
	}
	return "?"
}

// selectAll returns the query reading every row of t in key order, text in byte order (SQLite's
// BINARY collation; PostgreSQL's "C"), so that both databases read the same rows in the same
// order.
func (d dialect) selectAll(t Table) string {
	exprs := make([]string, len(t.cols))
	for i, c := range t.cols {
		exprs[i] = d.expr(c)
	}
	order := make([]string, len(t.key))
	for i, k := range t.key {
		order[i] = quote(k)
		if d.postgres && t.kindOf(k) == textCol {
			order[i] += ` COLLATE "C"`
		}
	}
	return "SELECT " + strings.Join(exprs, ", ") + " FROM " + quote(t.name) + " ORDER BY " + strings.Join(order, ", ")
}

// insert returns the statement inserting rows rows of t.
func (d dialect) insert(t Table, rows int) string {
	names := make([]string, len(t.cols))
	for i, c := range t.cols {
		names[i] = d.expr(c)
	}
	var b strings.Builder
	b.WriteString("INSERT INTO " + quote(t.name) + " (" + strings.Join(names, ", ") + ") VALUES ")
	n := 0
	for r := range rows {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for i := range t.cols {
			if i > 0 {
				b.WriteString(", ")
			}
			n++
			b.WriteString(d.placeholder(n))
		}
		b.WriteByte(')')
	}
	return b.String()
}

// kindOf returns the kind of t's column name (text when there is none).
func (t Table) kindOf(name string) kind {
	for _, c := range t.cols {
		if c.name == name {
			return c.kind
		}
	}
	return textCol
}
