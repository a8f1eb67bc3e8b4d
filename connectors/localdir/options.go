package localdir

import (
	"fmt"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

func init() {
	connectors.Register("localdir", func(_ string, cfg Config) (connectors.Source, error) {
		return New(cfg)
	})
}

// Config configures a folder source. Its fields tagged koanf are the options of a source with
// type: localdir. A Config built in Go is taken as it is: its zero value lists the folder's
// top level and takes files at once; a source configured by options starts from SetDefaults
// instead (recursive, stable for 5 s).
type Config struct {
	// Path is the folder to watch. It must exist.
	Path string `koanf:"path"`
	// Recursive descends into subfolders (done/ and failed/ are never scanned).
	Recursive bool `koanf:"recursive"`
	// Include keeps only files whose path relative to path matches one of these globs
	// (path.Match syntax, matched against the relative path and the base name); empty keeps all.
	Include connectors.Globs `koanf:"include"`
	// Exclude drops files matching any of these globs.
	Exclude connectors.Globs `koanf:"exclude"`
	// MoveFinished moves a file to done/ or failed/ (keeping its relative path) once its job is
	// final; skipped files go to failed/ too. A file already at the target is never overwritten,
	// and nothing moves through a link (a done/ that is a link is an error naming it).
	MoveFinished bool `koanf:"move_finished"`
	// StableFor is how long size and modification time must stay unchanged before a file is
	// taken, so files still being copied are not uploaded half-written.
	StableFor time.Duration `koanf:"stable_for"`
	// OwnerFrom "folder": the first folder under path names the file's owner (an e-mail or an
	// id), one folder per person; files at the top have none.
	OwnerFrom string `koanf:"owner_from"`
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// SetDefaults sets the defaults of the options: recursive, stable for 5 s. Sources built
// from options start from them; New does not apply them (false and 0 mean what they say).
func (c *Config) SetDefaults() {
	c.Recursive = true
	c.StableFor = 5 * time.Second
}

// Validate returns an *connectors.OptionError naming the first option at fault, or nil. It
// does not look at the folder (New does).
func (c *Config) Validate() error {
	switch {
	case c.Path == "":
		return connectors.Required("path", c.Path)
	case c.StableFor < 0:
		return &connectors.OptionError{Key: "stable_for", Err: fmt.Errorf("%v is negative", c.StableFor)}
	case c.OwnerFrom != "" && c.OwnerFrom != "folder":
		return &connectors.OptionError{Key: "owner_from", Err: fmt.Errorf("%q is not folder", c.OwnerFrom)}
	}
	if err := c.Include.CheckOption("include"); err != nil {
		return err
	}
	return c.Exclude.CheckOption("exclude")
}
