package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/sandbox"
)

// bigUploads is backfill_big_throughput: 20 files of 200 MiB (8 MiB with env.Short) to the
// sandbox on loopback, 10 at once, by the API client (as the pipeline uploads them, the
// client's own cap of 10 simultaneous uploads) and by 10 curl -T at once, in the order bridge,
// curl, curl, bridge, bridge, curl, each side's best run kept; MiB/s over the whole batch. The
// files and the sandbox's copies of them are kept in memory (memoryDir) when it has room, so the
// figure is the loopback's and the two clients', not the disk's: on this machine's shared disk,
// writing the 4 GiB of each run bounded both sides, and the ratio swung from 0.60 to 1.14.
func bigUploads(ctx context.Context, env Env) (Result, error) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		return Result{}, fmt.Errorf("curl -T is the reference and is not installed: %w", err)
	}
	size := int64(200 << 20)
	if env.Short {
		size = 8 << 20
	}
	const files, atOnce = 20, backfillUploads
	parent, where := memoryDir(env.Dir, 2*files*size+(256<<20))
	env.Logf("bench backfill: %d × %d MiB, the files and the sandbox's copies in %s", files, size>>20, where)
	dir, err := os.MkdirTemp(parent, "big-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(dir)
	paths := make([]string, files)
	for i := range paths {
		paths[i] = filepath.Join(dir, fmt.Sprintf("big-%02d.wav", i))
		if err := writeUploadWAV(ctx, paths[i], size); err != nil {
			return Result{}, fmt.Errorf("write %s: %w", paths[i], err)
		}
	}
	sb, err := startUploadSandbox(ctx, dir)
	if err != nil {
		return Result{}, fmt.Errorf("start sandbox: %w", err)
	}
	defer func() { sb.hs.Close(); sb.srv.Close() }()
	c, err := api.New(api.Config{BaseURL: sb.base, Key: sandbox.LocalKey, MaxAttempts: 1, MaxConcurrentUploads: atOnce})
	if err != nil {
		return Result{}, fmt.Errorf("api client: %w", err)
	}
	bridgeSide := func(path string) error {
		_, err := c.Upload(ctx, api.UploadParams{Filename: filepath.Base(path), Size: size,
			Open: func() (io.ReadCloser, error) { return os.Open(path) }})
		return err
	}
	curlSide := func(path string) error {
		_, err := sb.curlSend(ctx, curl, path, size)
		return err
	}
	total := float64(files*size) / (1 << 20)
	var best [2]float64
	for i, side := range []int{0, 1, 1, 0, 0, 1} {
		syscall.Sync()
		if err := sb.reset(ctx); err != nil {
			return Result{}, err
		}
		send := bridgeSide
		if side == 1 {
			send = curlSide
		}
		secs, err := batch(paths, atOnce, send)
		if err != nil {
			return Result{}, fmt.Errorf("%d files of %d MiB, %s: %w", files, size>>20, []string{"bridge", "curl -T"}[side], err)
		}
		env.Logf("bench backfill: %d × %d MiB, 10 at once, run %d, %s: %.0f MiB/s", files, size>>20, i+1, []string{"bridge", "curl -T"}[side], total/secs)
		best[side] = max(best[side], total/secs)
	}
	return Goal{MinRatio: Ref(0.8)}.Figure("backfill_big_throughput", best[0], "MiB/s", Ref(best[1]), "curl -T, 10 at once"), nil
}

// batch sends every path with send, atOnce at a time, and returns the seconds from the first
// start to the last end; it fails with the first error.
func batch(paths []string, atOnce int, send func(string) error) (float64, error) {
	queue := make(chan string, len(paths))
	for _, p := range paths {
		queue <- p
	}
	close(queue)
	var wg sync.WaitGroup
	errs := make(chan error, len(paths))
	start := time.Now()
	for range atOnce {
		wg.Go(func() {
			for p := range queue {
				if err := send(p); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return secs, nil
}

// memoryDir returns a folder in memory (/dev/shm, a tmpfs) to keep need bytes in, when both
// the tmpfs and the machine's available memory (MemAvailable, twice need: the rest of the
// machine keeps as much) have them to spare, else dir; and what to call the place in a log line.
func memoryDir(dir string, need int64) (string, string) {
	const shm = "/dev/shm"
	var st syscall.Statfs_t
	avail, err := procField("/proc/meminfo", "MemAvailable")
	if err == nil && avail > uint64(2*need) && syscall.Statfs(shm, &st) == nil && int64(st.Bavail)*int64(st.Bsize) > need {
		return shm, "memory (" + shm + ")"
	}
	if dir == "" {
		dir = os.TempDir()
	}
	return dir, dir + " (no room in " + shm + "; the disk may bound both sides)"
}
