package export

import "github.com/transcript-bridge/bridge/bridge"

// Store is what the exporter needs of the store: runs, checkpoints and the export leases
// (bridge/sqlite implements it, with the rest of bridge.Store).
type Store interface {
	bridge.ExportStore
}
