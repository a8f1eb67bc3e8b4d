package postgres

// SchemaVersion returns the number of the newest migration embedded in this binary: the schema
// version a database has once Open has migrated it (see also Store.SchemaVersion, the version a
// database has), the same number as bridge/sqlite's for the same schema. It returns 0 when the
// embedded migrations cannot be read (a build defect that Open reports too).
func SchemaVersion() int {
	vs, err := embedded()
	if err != nil || len(vs) == 0 {
		return 0
	}
	return int(vs[len(vs)-1])
}
