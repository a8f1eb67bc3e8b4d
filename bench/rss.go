package bench

import (
	"bytes"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user and system) the process has used so far; 0 where the
// system cannot say.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// perItem formats the CPU time cpu spent on n items over wall: "117.0 µs of CPU per delivery
// (1.7 cores busy)".
func perItem(cpu, wall time.Duration, n int, item string) string {
	return fmt.Sprintf("%.1f µs of CPU per %s (%.1f cores busy)", float64(cpu.Nanoseconds())/1e3/float64(n), item, cpu.Seconds()/wall.Seconds())
}

// peakRSS runs fn and returns the process's peak resident set size meanwhile, in bytes: the
// kernel's high-water mark (VmHWM) reset before fn by writing 5 to /proc/self/clear_refs, or,
// where that cannot be written, VmRSS sampled every 10 ms. The heap is returned to the system
// first, so what an earlier measurement left behind is not counted. It fails when
// /proc/self/status cannot be read (not Linux).
func peakRSS(fn func()) (uint64, error) {
	debug.FreeOSMemory()
	if _, err := procStatus("VmRSS"); err != nil {
		return 0, fmt.Errorf("bench: peak RSS: %w", err)
	}
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err == nil {
		fn()
		hwm, err := procStatus("VmHWM")
		if err != nil {
			return 0, fmt.Errorf("bench: peak RSS: %w", err)
		}
		return hwm, nil
	}
	var peak atomic.Uint64
	sample := func() {
		if rss, err := procStatus("VmRSS"); err == nil && rss > peak.Load() {
			peak.Store(rss)
		}
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				sample()
			}
		}
	}()
	fn()
	close(done)
	<-finished
	sample()
	return peak.Load(), nil
}

// procStatus returns field (VmRSS, VmHWM) of /proc/self/status in bytes. It fails when the file
// cannot be read or holds no such field.
func procStatus(field string) (uint64, error) { return procStatusOf("self", field) }

// procStatusOf returns field of /proc/<pid>/status in bytes (pid "self": this process's).
func procStatusOf(pid, field string) (uint64, error) {
	return procField("/proc/"+pid+"/status", field)
}

// procField returns field of a /proc file of "name: value kB" lines (status, meminfo) in bytes.
func procField(path, field string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for line := range bytes.Lines(b) {
		name, rest, ok := bytes.Cut(line, []byte(":"))
		if !ok || string(name) != field {
			continue
		}
		kb, err := strconv.ParseUint(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s %s: %w", path, field, err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("%s: no %s", path, field)
}
