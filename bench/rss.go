package bench

import (
	"bytes"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"
)

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
func procStatus(field string) (uint64, error) {
	b, err := os.ReadFile("/proc/self/status")
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
			return 0, fmt.Errorf("/proc/self/status %s: %w", field, err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("/proc/self/status: no %s", field)
}
