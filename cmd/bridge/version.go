package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/transcript-bridge/bridge/bridge/sqlite"
)

// Build facts, set at link time when the build knows better than the module metadata:
//
//	go build -o bin/bridge -ldflags "-X main.version=v1.2.3 -X main.commit=abc1234 -X main.date=2026-11-23T10:00:00Z" ./cmd/bridge
//
// Empty ones are read from debug.ReadBuildInfo (module version, vcs.revision, vcs.time).
var (
	version string
	commit  string
	date    string
)

// buildInfo is what bridge version prints.
type buildInfo struct {
	Version, Commit, Date, GoVersion string
	Modified                         bool
	Schema                           int
}

// readBuildInfo merges the link-time values with the module's build information.
func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, Commit: commit, Date: date, GoVersion: runtime.Version(), Schema: sqlite.SchemaVersion()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "" {
			b.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && b.Commit == "":
				b.Commit = s.Value
			case s.Key == "vcs.time" && b.Date == "":
				b.Date = s.Value
			case s.Key == "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	for _, p := range []*string{&b.Version, &b.Commit, &b.Date} {
		if *p == "" {
			*p = "unknown"
		}
	}
	return b
}

// String is the one-line form of --version.
func (b buildInfo) String() string {
	c := b.Commit
	if b.Modified {
		c += " (modified)"
	}
	return fmt.Sprintf("bridge %s (commit %s, built %s, %s, store schema %d)", b.Version, c, b.Date, b.GoVersion, b.Schema)
}

func printVersion(w io.Writer) {
	b := readBuildInfo()
	c := b.Commit
	if b.Modified {
		c += " (modified)"
	}
	fmt.Fprintf(w, "version:      %s\ncommit:       %s\nbuilt:        %s\ngo:           %s\nstore schema: %d\n",
		b.Version, c, b.Date, b.GoVersion, b.Schema)
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, build date, Go version and store schema version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			printVersion(cmd.OutOrStdout())
			return nil
		},
	}
}
