package localdir

import (
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

// parseOptions reads a source's options from configuration: path, recursive, include, exclude,
// stable_for, move_finished, owner_from. Unknown options and wrong types are errors naming the option.
func parseOptions(opts map[string]any) (Config, error) {
	o := connectors.NewOptions(opts)
	o.Required("path")
	cfg := Config{
		Path:         o.String("path", ""),
		Recursive:    o.Bool("recursive", true),
		Include:      o.Globs("include"),
		Exclude:      o.Globs("exclude"),
		MoveFinished: o.Bool("move_finished", false),
		StableFor:    o.Duration("stable_for", 5*time.Second),
		OwnerFrom:    o.String("owner_from", ""),
	}
	return cfg, o.Err("localdir")
}
