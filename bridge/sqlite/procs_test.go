package sqlite_test

import (
	"runtime"
	"testing"

	"github.com/transcript-bridge/bridge/bridge/sqlite"
)

// TestWriterProcs checks that WriterProcs raises GOMAXPROCS to one more than the cores, that
// nested calls raise it once and the last undo gives the default back, and that a GOMAXPROCS
// set in the environment or below the cores is left alone.
func TestWriterProcs(t *testing.T) {
	t.Setenv("GOMAXPROCS", "") // empty: as if unset
	cores := runtime.NumCPU()
	if got := runtime.GOMAXPROCS(0); got != cores {
		t.Skipf("GOMAXPROCS is %d, not the %d cores (go test -cpu, a CPU quota): WriterProcs leaves it alone", got, cores)
	}
	undo := sqlite.WriterProcs()
	if got := runtime.GOMAXPROCS(0); got != cores+1 {
		t.Errorf("WriterProcs: GOMAXPROCS = %d, want %d", got, cores+1)
	}
	undo2 := sqlite.WriterProcs() // nested: no second raise
	if got := runtime.GOMAXPROCS(0); got != cores+1 {
		t.Errorf("WriterProcs twice: GOMAXPROCS = %d, want %d", got, cores+1)
	}
	undo()
	undo() // an undo counts once
	if got := runtime.GOMAXPROCS(0); got != cores+1 {
		t.Errorf("one of two undone: GOMAXPROCS = %d, want %d", got, cores+1)
	}
	undo2()
	if got := runtime.GOMAXPROCS(0); got != cores {
		t.Errorf("both undone: GOMAXPROCS = %d, want the default %d", got, cores)
	}

	runtime.GOMAXPROCS(1) // set by a caller, or a quota: left alone
	undo = sqlite.WriterProcs()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("WriterProcs at GOMAXPROCS 1: GOMAXPROCS = %d, want 1 (unchanged)", got)
	}
	undo()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("its undo: GOMAXPROCS = %d, want 1 (unchanged)", got)
	}
	runtime.SetDefaultGOMAXPROCS()

	t.Setenv("GOMAXPROCS", "1") // the operator's choice is kept
	undo = sqlite.WriterProcs()
	if got := runtime.GOMAXPROCS(0); got != cores {
		t.Errorf("WriterProcs with GOMAXPROCS=1 in the environment: GOMAXPROCS = %d, want %d (unchanged)", got, cores)
	}
	undo()
}
