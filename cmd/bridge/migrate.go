package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/bridge/postgres"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
)

// schemaVersions returns the configured database's schema version, read without migrating it,
// and the newest version this bridge carries.
func schemaVersions(ctx context.Context, cfg *Config) (database, known int, err error) {
	dsn, err := storeDSN(cfg)
	if err != nil {
		return 0, 0, err
	}
	if cfg.Store.Driver == "postgres" {
		v, err := postgres.DatabaseVersion(ctx, dsn)
		return v, postgres.SchemaVersion(), err
	}
	v, err := sqlite.DatabaseVersion(ctx, dsn)
	return v, sqlite.SchemaVersion(), err
}

// newMigrateCmd is migrate: apply the store's schema migrations, or with --status say where
// the schema stands.
func newMigrateCmd() *cobra.Command {
	var cf configFlags
	var status bool
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply the store's schema migrations (once, however many replicas run it)",
		Long: `Brings the configured store's schema (store.driver, store.dsn) up to the version this
bridge carries, each migration once even when several replicas start together, and prints the
version before and after. bridge run also migrates on start, and refuses a schema newer than it
knows (a newer bridge migrated the database): upgrade by running the new version's migrate once,
then rolling the replicas.

With --status it changes nothing: it prints the database's version and this bridge's, and exits
3 when migrations are pending, 1 when the database is newer than this bridge.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := cf.load()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			before, known, err := schemaVersions(ctx, cfg)
			if err != nil {
				return err
			}
			if status {
				return printSchemaStatus(cmd.OutOrStdout(), cfg, before, known)
			}
			db, err := openDatabase(ctx, cfg)
			if err != nil {
				return err
			}
			defer db.Close()
			after, err := db.SchemaVersion(ctx)
			if err != nil {
				return err
			}
			if after == before {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: schema version %d, up to date\n", describeStore(cfg), after)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: schema version %d (was %d)\n", describeStore(cfg), after, before)
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().BoolVar(&status, "status", false, "print the schema versions and change nothing")
	return cmd
}

// printSchemaStatus prints where the schema stands; pending migrations exit 3, a newer schema 1.
func printSchemaStatus(w io.Writer, cfg *Config, database, known int) error {
	fmt.Fprintf(w, "%s: schema version %d; this bridge carries %d\n", describeStore(cfg), database, known)
	switch {
	case database > known:
		return fmt.Errorf("schema version %d is newer than this bridge knows (%d)", database, known)
	case database < known:
		return &exitError{code: exitWaiting, err: fmt.Errorf("%d migration(s) pending: run bridge migrate", known-database)}
	}
	return nil
}
