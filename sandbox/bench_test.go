package sandbox

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// zeros reads as an endless run of zero bytes without allocating.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// bigWAV returns a streamed WAV body of size bytes (PCM at 192 kB/s) and its length.
func bigWAV(size int64) io.Reader {
	var h bytes.Buffer
	h.WriteString("RIFF")
	binary.Write(&h, binary.LittleEndian, uint32(min(size-8, 1<<32-1)))
	h.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(2), uint32(48000), uint32(192000), uint16(4), uint16(16)} {
		binary.Write(&h, binary.LittleEndian, v)
	}
	h.WriteString("data")
	binary.Write(&h, binary.LittleEndian, uint32(min(size-44, 1<<32-1)))
	return io.MultiReader(&h, io.LimitReader(zeros{}, size-44))
}

// streamUpload sends size bytes to the sandbox without holding them in memory.
func streamUpload(tb testing.TB, h *harness, size int64) {
	rq, err := http.NewRequest("POST", h.base+"/transcriptions", bigWAV(size))
	if err != nil {
		tb.Fatal(err)
	}
	rq.ContentLength = size
	rq.Header.Set("Authorization", "Bearer "+ownerKey)
	rq.Header.Set("Content-Disposition", "attachment; filename=big.wav")
	resp, err := http.DefaultClient.Do(rq)
	if err != nil {
		tb.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 {
		tb.Fatalf("upload of %d bytes = %d", size, resp.StatusCode)
	}
}

// peakHeap samples HeapInuse while fn runs and returns the highest value seen.
func peakHeap(fn func()) uint64 {
	var peak atomic.Uint64
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	fn()
	close(done)
	wg.Wait()
	return peak.Load()
}

// BenchmarkUpload streams bodies of growing size through the sandbox (client and server in this
// process) and reports bytes allocated per upload and the peak heap: neither grows with the
// file. Run: go test ./sandbox -run '^$' -bench Upload -benchmem
func BenchmarkUpload(b *testing.B) {
	for _, size := range []int64{16 << 20, 256 << 20, 2 << 30} {
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			h := newHarness(b, func(o *Options) {
				o.TimeScale = 1000 // keep processing out of the measurement
				o.Logf = func(string, ...any) {}
			})
			b.SetBytes(size)
			b.ReportAllocs()
			runtime.GC()
			b.ResetTimer()
			peak := peakHeap(func() {
				for range b.N {
					streamUpload(b, h, size)
				}
			})
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}

// TestUploadMemoryIsFlat checks that the bytes allocated by an upload do not grow with its
// size: 8 MiB and 256 MiB bodies allocate about the same.
func TestUploadMemoryIsFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 264 MiB")
	}
	h := newHarness(t, func(o *Options) { o.TimeScale = 1000 })
	measure := func(size int64) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		streamUpload(t, h, size)
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	measure(1 << 20) // warm up connections and statements
	small, large := measure(8<<20), measure(256<<20)
	t.Logf("allocated: %d KiB for 8 MiB, %d KiB for 256 MiB", small>>10, large>>10)
	if large > 2*small+(4<<20) {
		t.Errorf("a 256 MiB upload allocated %d KiB, an 8 MiB one %d KiB: memory grows with the file", large>>10, small>>10)
	}
}
