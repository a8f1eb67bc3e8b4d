package sqlite

// SchemaVersion returns the number of the newest migration embedded in this binary: the schema
// version a database has once Open has migrated it. It returns 0 when the embedded migrations
// cannot be read (a build defect that Open reports too).
func SchemaVersion() int {
	ms, err := embedded()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}
