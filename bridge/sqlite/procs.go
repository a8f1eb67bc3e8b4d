package sqlite

import (
	"os"
	"runtime"
	"sync"
)

// WriterProcs gives a process whose hot path writes through a Store one P (GOMAXPROCS) more
// than Go's default, unless the GOMAXPROCS environment variable sets it (then it changes
// nothing), and returns the func that puts the value it found back.
//
// Why: a statement runs in C (cgo), and a call longer than about 20 µs gives up its P to the
// goroutines waiting for one; back from C, the writer waits for a P of its own among the busy
// ones, with the whole group commit waiting behind it. With one P more, it finds one sooner.
// On 2 cores, the relay's drain ran 12% faster for 13% less CPU per delivery (go test ./bench
// -bench RelayDrain, alternated with GOMAXPROCS=2; BENCHMARKS.md). Setting GOMAXPROCS stops
// Go's automatic updates of it (a CPU quota changing under the process); the undo does not
// restart them. Calls nest (several bridges in one process, as in tests): the first raises it,
// the last undo puts it back.
func WriterProcs() (undo func()) {
	if os.Getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	procs.Lock()
	defer procs.Unlock()
	if procs.users == 0 {
		procs.prev = runtime.GOMAXPROCS(0)
		runtime.GOMAXPROCS(procs.prev + 1)
	}
	procs.users++
	var once sync.Once
	return func() {
		once.Do(func() {
			procs.Lock()
			defer procs.Unlock()
			if procs.users--; procs.users == 0 {
				runtime.GOMAXPROCS(procs.prev)
			}
		})
	}
}

// procs counts WriterProcs' users and keeps the GOMAXPROCS the first one found.
var procs struct {
	sync.Mutex
	users, prev int
}
