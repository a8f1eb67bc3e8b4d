package bench

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/sandbox"
)

func init() { Register("upload", Upload) }

// Upload measures the goal "streaming a 1 GiB file to the sandbox on loopback at ≥ 0.8 × curl
// -T of the same file to the same endpoint in the same run, peak RSS ≤ 64 MiB regardless of
// size". It writes a 1 GiB WAV file (64 MiB with env.Short) to env.Dir, starts the sandbox in
// this process on a loopback port with processing slowed out of the way, and uploads the file
// with the bridge's API client and with curl -T, twice each in the order bridge, curl, curl,
// bridge (each side first once), the best of each kept.
//
// upload_peak_rss is the peak resident memory of this whole process during the bridge's
// upload: client and in-process sandbox server together, so an upper bound of the client's.
// Without env.Short, upload_peak_rss_64mib is the same for a 64 MiB file, to show the peak
// does not grow with the size.
func Upload(ctx context.Context, env Env) (*Report, error) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		return nil, fmt.Errorf("bench upload: curl -T is the reference and is not installed: %w", err)
	}
	size := int64(1 << 30)
	if env.Short {
		size = 64 << 20
	}
	big := filepath.Join(env.Dir, "upload-big.wav")
	if err := writeUploadWAV(ctx, big, size); err != nil {
		return nil, fmt.Errorf("bench upload: write %s: %w", big, err)
	}
	defer os.Remove(big)
	sb, err := startUploadSandbox(ctx, env.Dir)
	if err != nil {
		return nil, fmt.Errorf("bench upload: start sandbox: %w", err)
	}
	defer func() { sb.hs.Close(); sb.srv.Close() }()
	c, err := api.New(api.Config{BaseURL: sb.base, Key: sandbox.LocalKey, MaxAttempts: 1})
	if err != nil {
		return nil, fmt.Errorf("bench upload: api client: %w", err)
	}
	var bridgeBest, curlBest float64 // MiB/s
	var peak uint64
	bridgeRun := func(i int) error {
		run, err := sb.bridgeUpload(ctx, c, big, size)
		if err != nil {
			return err
		}
		bridgeBest, peak = max(bridgeBest, uploadRate(size, run.secs)), max(peak, run.peak)
		env.Logf("bench upload: bridge %d: %.0f MiB/s, peak RSS %.1f MiB (%.1f MiB before the upload)",
			i+1, uploadRate(size, run.secs), uploadMiB(run.peak), uploadMiB(run.before))
		return nil
	}
	curlRun := func(i int) error {
		secs, err := sb.curlUpload(ctx, curl, big, size)
		if err != nil {
			return err
		}
		curlBest = max(curlBest, uploadRate(size, secs))
		env.Logf("bench upload: curl -T %d: %.0f MiB/s", i+1, uploadRate(size, secs))
		return nil
	}
	// Bridge, curl, curl, bridge, bridge, curl: each side goes first and second alike (the
	// first upload of a run finds the caches colder than the next), three times each, the
	// best kept; before each, the disk's write-back is flushed (sync), so one upload's file
	// is not written back during the next one.
	n := map[bool]int{}
	for _, side := range []bool{true, false, false, true, true, false} {
		syscall.Sync()
		run := curlRun
		if side {
			run = bridgeRun
		}
		if err := run(n[side]); err != nil {
			return nil, err
		}
		n[side]++
	}
	results := []Result{
		Goal{MinRatio: Ref(0.8)}.Figure("upload_throughput", bridgeBest, "MiB/s", Ref(curlBest), "curl -T"),
		Goal{MaxValue: Ref(64)}.Figure("upload_peak_rss", uploadMiB(peak), "MiB", nil, ""),
	}
	if !env.Short {
		small := filepath.Join(env.Dir, "upload-64mib.wav")
		if err := writeUploadWAV(ctx, small, 64<<20); err != nil {
			return nil, fmt.Errorf("bench upload: write %s: %w", small, err)
		}
		defer os.Remove(small)
		run, err := sb.bridgeUpload(ctx, c, small, 64<<20)
		if err != nil {
			return nil, err
		}
		env.Logf("bench upload: bridge 64 MiB: peak RSS %.1f MiB (%.1f MiB before)", uploadMiB(run.peak), uploadMiB(run.before))
		results = append(results, Goal{MaxValue: Ref(64)}.Figure("upload_peak_rss_64mib", uploadMiB(run.peak), "MiB", nil, ""))
	}
	return &Report{Results: results}, nil
}

func uploadMiB(b uint64) float64                  { return float64(b) / (1 << 20) }
func uploadRate(size int64, secs float64) float64 { return float64(size) / (1 << 20) / secs }

// writeUploadWAV writes a PCM WAV header (48 kHz stereo 16-bit) and zeros up to size bytes.
func writeUploadWAV(ctx context.Context, path string, size int64) error {
	le := binary.LittleEndian
	h := le.AppendUint32([]byte("RIFF"), uint32(size-8))
	h = le.AppendUint16(le.AppendUint16(le.AppendUint32(append(h, "WAVEfmt "...), 16), 1), 2)
	h = le.AppendUint16(le.AppendUint16(le.AppendUint32(le.AppendUint32(h, 48000), 192000), 4), 16)
	h = le.AppendUint32(append(h, "data"...), uint32(size-44))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Write(h); err != nil {
		return err
	}
	zeros := make([]byte, 1<<20)
	for left := size - int64(len(h)); left > 0; left -= int64(len(zeros)) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := f.Write(zeros[:min(left, int64(len(zeros)))]); err != nil {
			return err
		}
	}
	if err := f.Sync(); err != nil { // written back now, not during a measured upload
		return err
	}
	return f.Close()
}

// uploadSandbox is the sandbox served over HTTP on a loopback port.
type uploadSandbox struct {
	srv  *sandbox.Server
	hs   *http.Server
	base string
}

// startUploadSandbox runs the sandbox on a SQLite file in dir, seeded with sandbox.LocalSeed, with
// processing a thousand times slower than real (nothing is processed during the measurement)
// and its logs discarded.
func startUploadSandbox(ctx context.Context, dir string) (*uploadSandbox, error) {
	srv, err := sandbox.New(ctx, sandbox.Options{DBPath: filepath.Join(dir, "upload-sandbox.db"), Seed: sandbox.LocalSeed(),
		TimeScale: 1000, MediaDir: dir})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		return nil, err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 30 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go hs.Serve(ln)
	return &uploadSandbox{srv: srv, hs: hs, base: "http://" + ln.Addr().String() + sandbox.BasePath}, nil
}

// reset empties the sandbox (its received files included) so every upload meets the same state.
func (sb *uploadSandbox) reset(ctx context.Context) error {
	if _, err := sb.srv.Reset(ctx); err != nil {
		return fmt.Errorf("bench upload: reset sandbox: %w", err)
	}
	return nil
}

// uploadRun is one upload by the bridge: its seconds, and the process's resident set size
// before and at its peak.
type uploadRun struct {
	secs         float64
	before, peak uint64
}

// bridgeUpload uploads path with c as the pipeline does (Open returning the file).
func (sb *uploadSandbox) bridgeUpload(ctx context.Context, c *api.Client, path string, size int64) (uploadRun, error) {
	var run uploadRun
	if err := sb.reset(ctx); err != nil {
		return run, err
	}
	var upErr error
	peak, err := peakRSS(func() {
		run.before, _ = procStatus("VmRSS")
		start := time.Now()
		_, upErr = c.Upload(ctx, api.UploadParams{Filename: filepath.Base(path), Size: size,
			Open: func() (io.ReadCloser, error) { return os.Open(path) }})
		run.secs = time.Since(start).Seconds()
	})
	run.peak = peak
	if err = cmp.Or(upErr, err); err != nil {
		return run, fmt.Errorf("bench upload: bridge: %w", err)
	}
	return run, nil
}

// curlUpload sends path with curl -T, POST and the headers the API client sends, and returns
// curl's own total time (connection included, process start excluded).
func (sb *uploadSandbox) curlUpload(ctx context.Context, curl, path string, size int64) (float64, error) {
	if err := sb.reset(ctx); err != nil {
		return 0, err
	}
	return sb.curlSend(ctx, curl, path, size)
}

// curlSend is curlUpload without the reset: one of several at once.
func (sb *uploadSandbox) curlSend(ctx context.Context, curl, path string, size int64) (float64, error) {
	cmd := exec.CommandContext(ctx, curl, "-s", "-S", "-T", path, "-X", "POST", "-o", "/dev/null",
		"-w", "%{http_code} %{time_total}",
		"-H", "Authorization: Bearer "+sandbox.LocalKey,
		"-H", "Content-Disposition: attachment; filename="+filepath.Base(path),
		"-H", "Content-Type: application/octet-stream",
		"-H", "Accept: application/json",
		"-H", "Idempotency-Key: "+uuid.NewString(),
		sb.base+"/transcriptions")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("bench upload: curl: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var code int
	var secs float64
	if _, err := fmt.Sscan(string(out), &code, &secs); err != nil {
		return 0, fmt.Errorf("bench upload: curl: read %q: %w", out, err)
	}
	if code < 200 || code > 299 || secs <= 0 {
		return 0, fmt.Errorf("bench upload: curl: HTTP %d after %.3f s for %d bytes", code, secs, size)
	}
	return secs, nil
}
