package bridge

import "fmt"

// SchemaError is a database whose schema version this bridge cannot run on: newer than the
// migrations it carries (a newer bridge migrated it), or older than it needs where it does not
// migrate by itself.
type SchemaError struct {
	// Database is the database's schema version.
	Database int
	// Known is the newest version this bridge carries.
	Known int
}

func (e *SchemaError) Error() string {
	if e.Database > e.Known {
		return fmt.Sprintf("schema version %d is newer than this bridge knows (%d): a newer bridge migrated the database; run that version (or newer)", e.Database, e.Known)
	}
	return fmt.Sprintf("schema version %d is older than this bridge needs (%d): run bridge migrate", e.Database, e.Known)
}
