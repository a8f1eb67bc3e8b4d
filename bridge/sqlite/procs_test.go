package sqlite_test

import (
	"runtime"
	"testing"

	"github.com/transcript-bridge/bridge/bridge/sqlite"
)

func TestWriterProcs(t *testing.T) {
	t.Setenv("GOMAXPROCS", "") // unset for this test: Go's default, or what a caller set
	before := runtime.GOMAXPROCS(0)
	undo := sqlite.WriterProcs()
	if got := runtime.GOMAXPROCS(0); got != before+1 {
		t.Errorf("WriterProcs: GOMAXPROCS = %d, want %d", got, before+1)
	}
	undo2 := sqlite.WriterProcs() // nested: no second raise
	if got := runtime.GOMAXPROCS(0); got != before+1 {
		t.Errorf("WriterProcs twice: GOMAXPROCS = %d, want %d", got, before+1)
	}
	undo()
	undo() // an undo counts once
	if got := runtime.GOMAXPROCS(0); got != before+1 {
		t.Errorf("one of two undone: GOMAXPROCS = %d, want %d", got, before+1)
	}
	undo2()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("both undone: GOMAXPROCS = %d, want %d", got, before)
	}

	t.Setenv("GOMAXPROCS", "1") // the operator's choice is kept
	undo = sqlite.WriterProcs()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("WriterProcs with GOMAXPROCS=1 in the environment: GOMAXPROCS = %d, want %d (unchanged)", got, before)
	}
	undo()
}
