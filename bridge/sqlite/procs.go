package sqlite

import (
	"os"
	"runtime"
	"sync"
)

// WriterProcs gives a process whose hot path writes through a Store one P more than the cores
// (GOMAXPROCS = runtime.NumCPU()+1), and returns the func that gives Go its default back
// (runtime.SetDefaultGOMAXPROCS). It changes nothing, and its undo nothing, when GOMAXPROCS is
// not at the cores already: the GOMAXPROCS environment variable or a caller set it, or a CPU
// quota (a container's limit) holds it lower, where a P more would only get the process
// throttled.
//
// Why: a statement runs in C (cgo), and a call longer than about 20 µs gives up its P to the
// goroutines waiting for one; back from C, the writer waits for a P of its own among the busy
// ones, with the whole group commit waiting behind it. With one P more, it finds one sooner.
// On 2 cores, the relay's drain ran 13% faster for 13% less CPU per delivery (go test ./bench
// -bench RelayDrain, alternated with GOMAXPROCS=2; BENCHMARKS.md). While it holds, Go does not
// follow a CPU quota changing under the process. Calls nest (several bridges in one process, as
// in tests): the first raises it, the last undo gives the default back.
func WriterProcs() (undo func()) {
	procs.Lock()
	defer procs.Unlock()
	if procs.users == 0 && (os.Getenv("GOMAXPROCS") != "" || runtime.GOMAXPROCS(0) != runtime.NumCPU()) {
		return func() {}
	}
	if procs.users == 0 {
		runtime.GOMAXPROCS(runtime.NumCPU() + 1)
	}
	procs.users++
	var once sync.Once
	return func() {
		once.Do(func() {
			procs.Lock()
			defer procs.Unlock()
			if procs.users--; procs.users == 0 {
				runtime.SetDefaultGOMAXPROCS()
			}
		})
	}
}

// procs counts WriterProcs' users.
var procs struct {
	sync.Mutex
	users int
}
