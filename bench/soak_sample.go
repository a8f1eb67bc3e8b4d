package bench

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// soakSample is one look at the process during a soak.
type soakSample struct {
	at     time.Duration // since the soak began
	rss    float64       // MiB: anonymous memory resident (RssAnon)
	rssAll float64       // MiB: everything resident (VmRSS), the binary's pages included
	goHeap float64       // MiB: the Go heap's live objects (after the GC takeSample forces), part of rss
	// goMapped is the Go runtime's memory not returned to the system (heap, stacks, its own
	// structures), MiB; cInUse and cFree are the C allocator's (SQLite's allocations): in use,
	// and held free in its arenas. Together about rss; not judged, they say which part grows.
	goMapped, cInUse, cFree float64
	peerRSS                 float64 // MiB: the peer's (the sandbox's and the receiver's) RssAnon, not judged
	threads                 float64 // OS threads (each may hold a C allocator arena of SQLite's), not judged
	goroutines              float64
	files                   float64 // open file descriptors
	conns                   float64 // HTTP client connections open (kept alive or in use)
	// otherGoroutines and otherFiles are the goroutines and descriptors beside the HTTP
	// client connections' (floor): what is judged.
	otherGoroutines, otherFiles float64
	dbSize                      float64 // MiB: the database file
	walSize                     float64 // MiB: its write-ahead log
	jobs                        float64 // jobs stored
}

// floor keeps the fewest goroutines, open files and HTTP client connections seen since the
// last sample: read every 2 s (look), so what a sample judges is what stayed the whole
// interval, not a request in flight. The connections the HTTP clients keep alive between
// requests (two goroutines and a descriptor each, up to their pools' bound, for 90 s idle) are
// counted apart, read from the goroutines' stacks at the same instant: others is what the
// process holds beside them, which a leak raises and a pool filling up and draining does not;
// a leak of connections raises conns past the pools' bound (soakConnBound).
type floor struct {
	goroutines, files, conns float64
	// otherGoroutines and otherFiles are the goroutines and descriptors beside the HTTP
	// client connections', the fewest of the interval.
	otherGoroutines, otherFiles float64
}

// look reads the goroutines, open files and HTTP client connections once, keeping the fewest.
func (f *floor) look() {
	g := float64(runtime.NumGoroutine())
	reads, writes := httpConnGoroutines()
	f.goroutines = min(f.goroutines, g)
	f.conns = min(f.conns, float64(reads))
	f.otherGoroutines = min(f.otherGoroutines, g-float64(reads+writes))
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		f.files = min(f.files, float64(len(fds)))
		f.otherFiles = min(f.otherFiles, float64(len(fds)-reads))
	}
}

// reset forgets what was seen.
func (f *floor) reset() {
	inf := math.Inf(1)
	f.goroutines, f.files, f.conns, f.otherGoroutines, f.otherFiles = inf, inf, inf, inf, inf
}

// httpConnGoroutines counts the goroutines of net/http's client connections in every
// goroutine's stack: each connection has one reading it and one writing it, and one socket.
func httpConnGoroutines() (reads, writes int) {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	return bytes.Count(buf, []byte("net/http.(*persistConn).readLoop(")),
		bytes.Count(buf, []byte("net/http.(*persistConn).writeLoop("))
}

// takeSample returns the sample at at: the floor's goroutines and open files (then reset), the
// resident set, and the size of the database at dbPath and of its -wal file. The resident set
// judged is the anonymous memory (RssAnon: the heap, SQLite's and the runtime's allocations,
// stacks), not the pages of the binary and of mapped files, which the kernel maps in as code
// first runs (an hour's faults reach paths the first minutes did not) and takes back under
// pressure. The heap is collected and returned to the system first (debug.FreeOSMemory), so it
// is what the process holds, not what the collector has yet to free.
func takeSample(at time.Duration, dbPath string, jobs int, f *floor) soakSample {
	f.look()
	s := soakSample{at: at, jobs: float64(jobs), goroutines: f.goroutines, files: f.files, conns: f.conns,
		otherGoroutines: f.otherGoroutines, otherFiles: f.otherFiles}
	f.reset()
	debug.FreeOSMemory()
	m := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	if metrics.Read(m); m[0].Value.Kind() == metrics.KindUint64 {
		s.goHeap = float64(m[0].Value.Uint64()) / (1 << 20)
		s.goMapped = float64(m[1].Value.Uint64()-m[2].Value.Uint64()) / (1 << 20)
	}
	s.cInUse, s.cFree, _ = cMemory()
	if rss, err := procStatus("RssAnon"); err == nil {
		s.rss = float64(rss) / (1 << 20)
	}
	if n, err := procStatus("Threads"); err == nil {
		s.threads = float64(n >> 10) // procStatus reads kB
	}
	if rss, err := procStatus("VmRSS"); err == nil {
		s.rssAll = float64(rss) / (1 << 20)
	}
	if st, err := os.Stat(dbPath); err == nil {
		s.dbSize = float64(st.Size()) / (1 << 20)
	}
	if st, err := os.Stat(dbPath + "-wal"); err == nil {
		s.walSize = float64(st.Size()) / (1 << 20)
	}
	return s
}

// writeHeapProfile writes the heap profile (in use, as of the last GC: takeSample's) into
// dir as heap-SSSSs.pb.gz, SSSS the seconds since the soak began, for go tool pprof
// -diff_base.
func writeHeapProfile(dir string, at time.Duration) error {
	path := filepath.Join(dir, fmt.Sprintf("heap-%04.0fs.pb.gz", at.Seconds()))
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("heap profile %s: %w", path, err)
	}
	return f.Close()
}

// String is the line printed per sample.
func (s soakSample) String() string {
	return fmt.Sprintf("t=%s rss_anon=%.1fMiB (go_heap %.1fMiB go_mapped %.1fMiB c_in_use %.1fMiB c_free %.1fMiB) rss=%.1fMiB goroutines=%.0f (%.0f beside http) open_files=%.0f (%.0f beside http) http_conns=%.0f db=%.2fMiB wal=%.2fMiB jobs=%.0f db_per_job=%.1fKiB threads=%.0f peer_rss_anon=%.1fMiB",
		s.at.Round(time.Second), s.rss, s.goHeap, s.goMapped, s.cInUse, s.cFree, s.rssAll, s.goroutines, s.otherGoroutines, s.files, s.otherFiles, s.conns, s.dbSize, s.walSize, s.jobs, s.perJob()*1024, s.threads, s.peerRSS)
}

// perJob is the database file's MiB per job stored: the trickle adds jobs at a steady rate, so
// the file grows with them; what it takes per job must not.
func (s soakSample) perJob() float64 {
	if s.jobs == 0 {
		return 0
	}
	return s.dbSize / s.jobs
}

// growth fits a line (least squares) through the samples of the run's second half of value,
// and returns how much that line rises over the second half, as a fraction of its value at
// the half-way point: 0.05 is 5%. A fitted line is not moved by one sample's noise (a GC
// cycle, a checkpoint) as a comparison of two samples would be. It returns 0 with fewer than
// three samples.
func growth(samples []soakSample, total time.Duration, value func(soakSample) float64) float64 {
	var xs, ys []float64
	for _, s := range samples {
		if s.at >= total/2 {
			xs, ys = append(xs, s.at.Seconds()), append(ys, value(s))
		}
	}
	if len(xs) < 3 {
		return 0
	}
	var mx, my float64
	for i := range xs {
		mx, my = mx+xs[i], my+ys[i]
	}
	mx, my = mx/float64(len(xs)), my/float64(len(ys))
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 {
		return 0
	}
	slope := sxy / sxx
	half := (total / 2).Seconds()
	atHalf := my + slope*(half-mx)
	if atHalf <= 0 {
		return 0
	}
	return slope * (total.Seconds() - half) / atHalf
}
