package storetest

import (
	"testing"

	"github.com/transcript-bridge/bridge/bridge"
)

// RunShared runs the mapping-change case on two handles of one database; open returns both, on
// a new, empty database. Run covers it and every other two-handle case (through its Open); this
// entry point stays for callers that have only bridge.Store handles.
func RunShared(t *testing.T, open func(t *testing.T) (first, second bridge.Store)) {
	t.Run("MappingChangeSeenByTheOtherHandle", func(t *testing.T) {
		a, b := open(t)
		t.Cleanup(func() { a.Close(); b.Close() })
		mappingChangeShared(t, a, b)
	})
}
