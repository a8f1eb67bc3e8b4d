package api_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/sandbox"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// cutProxy forwards loopback connections to target; the first connection is cut after
// cutAfter bytes from the client, mid-body.
func cutProxy(t *testing.T, target string, cutAfter int64) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var conns atomic.Int32
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			first := conns.Add(1) == 1
			go func() {
				if first {
					io.CopyN(out, in, cutAfter)
					in.Close()
					out.Close()
					return
				}
				io.Copy(out, in)
				out.(*net.TCPConn).CloseWrite()
			}()
			go func() {
				io.Copy(in, out)
				in.Close()
			}()
		}
	}()
	return ln.Addr().String()
}

func TestUploadInterruptedMidBodyIsRetriedWithTheSameKey(t *testing.T) {
	sb := sandboxtest.Start(t)
	host := sb.URL[len("http://"):]
	host = host[:len(host)-len("/developer/v1")]
	proxy := cutProxy(t, host, 20000)
	c := newClient(t, sb, sandboxtest.OwnerKey, func(cfg *api.Config) { cfg.BaseURL = "http://" + proxy + "/developer/v1" })
	file := wav(10, 1) // 80 KB: the first attempt is cut at 20 KB
	dir := t.TempDir()
	path := filepath.Join(dir, "meeting.wav")
	os.WriteFile(path, file, 0o644)
	res, err := c.UploadFile(context.Background(), path, api.UploadParams{ExternalID: "cut-1"})
	if err != nil {
		t.Fatalf("UploadFile through a cutting proxy = %v", err)
	}
	var keys []string
	for _, e := range sb.Journal(t) {
		if e.Method == "POST" {
			keys = append(keys, e.IdempotencyKey)
		}
	}
	// Two attempts at least (a third when the retry arrives before the sandbox noticed the cut
	// and answers 409 idempotency_conflict), all with the one key.
	if len(keys) < 2 {
		t.Errorf("%d upload attempts, want a retry after the cut", len(keys))
	}
	for _, k := range keys {
		if k != res.IdempotencyKey {
			t.Errorf("upload attempts carried keys %q, want every one %s", keys, res.IdempotencyKey)
			break
		}
	}
	// The cut attempt left a failed UPLOAD_INCOMPLETE record; the retry made the one transcription.
	page, err := c.List(context.Background(), api.ListParams{ExternalID: "cut-1", Status: "failed"})
	if err != nil || page.Total != 1 {
		t.Fatalf("failed records of the cut attempt = %v, %v", page, err)
	}
	tr, _ := c.Wait(context.Background(), res.UUID, api.WaitOptions{})
	if tr.Status != "completed" {
		t.Errorf("the retried upload ended %s", tr.Status)
	}
}

// onceReader is a body that cannot be rewound.
type onceReader struct{ r io.Reader }

func (o onceReader) Read(b []byte) (int, error) { return o.r.Read(b) }

func TestUploadSingleUseBody(t *testing.T) {
	sb := sandboxtest.Start(t)
	host := sb.URL[len("http://") : len(sb.URL)-len("/developer/v1")]
	proxy := cutProxy(t, host, 20000)
	c := newClient(t, sb, sandboxtest.OwnerKey, func(cfg *api.Config) { cfg.BaseURL = "http://" + proxy + "/developer/v1" })
	file := wav(10, 2)
	_, err := c.Upload(context.Background(), api.UploadParams{Filename: "a.wav", Size: int64(len(file)), Body: onceReader{bytes.NewReader(file)}, IdempotencyKey: "given-key"})
	if !errors.Is(err, api.ErrNotRetryable) {
		t.Fatalf("cut upload of a single-use body = %v, want ErrNotRetryable", err)
	}
	// The caller retries with the same key and a fresh body: one transcription.
	res, err := c.Upload(context.Background(), api.UploadParams{Filename: "a.wav", Size: int64(len(file)), Body: onceReader{bytes.NewReader(file)}, IdempotencyKey: "given-key"})
	if err != nil || res.IdempotencyKey != "given-key" {
		t.Fatalf("retry = %+v, %v", res, err)
	}
	// A body shorter than Size is the caller's error, not a short upload.
	_, err = c.Upload(context.Background(), api.UploadParams{Filename: "b.wav", Size: int64(len(file)) + 10, Body: bytes.NewReader(file)})
	if err == nil || errors.Is(err, api.ErrNotRetryable) {
		t.Errorf("short body = %v, want a source error", err)
	}
}

// zeros reads as endless zero bytes without allocating.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// bigWAV is a streamed WAV body of size bytes.
func bigWAV(size int64) io.Reader {
	h := wav(0, 0)[:44]
	return io.MultiReader(bytes.NewReader(h), io.LimitReader(zeros{}, size-44))
}

// BenchmarkUpload streams a 1 GiB body through the client to the in-process sandbox and reports
// bytes allocated per upload (client and server together). Run:
// go test ./api -run '^$' -bench Upload -benchmem -benchtime 3x
func BenchmarkUpload(b *testing.B) {
	sb := sandboxtest.Start(b)
	c, err := api.New(api.Config{BaseURL: sb.URL, Key: sandboxtest.OwnerKey})
	if err != nil {
		b.Fatal(err)
	}
	const size = 1 << 30
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		var body io.Reader
		_, err := c.Upload(context.Background(), api.UploadParams{Filename: "big.wav", Size: size,
			Open: func() (io.ReadCloser, error) { body = bigWAV(size); return io.NopCloser(body), nil }})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// TestUploadMemoryDoesNotGrow: bytes allocated by an 8 MiB and a 256 MiB upload are alike.
func TestUploadMemoryDoesNotGrow(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 264 MiB")
	}
	sb := sandboxtest.Start(t, func(o *sandbox.Options) { o.TimeScale = 1000 })
	c, _ := api.New(api.Config{BaseURL: sb.URL, Key: sandboxtest.OwnerKey})
	measure := func(size int64) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := c.Upload(context.Background(), api.UploadParams{Filename: "big.wav", Size: size, Body: bigWAV(size)}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	measure(1 << 20)
	small, large := measure(8<<20), measure(256<<20)
	t.Logf("allocated: %d KiB for 8 MiB, %d KiB for 256 MiB", small>>10, large>>10)
	if large > 2*small+(4<<20) {
		t.Errorf("a 256 MiB upload allocated %d KiB against %d KiB for 8 MiB: memory grows with the file", large>>10, small>>10)
	}
}
