package check

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The bridge itself, built by scripts/build.sh (the image's build; .ci/run has just run it, so
// Go's cache makes this one a link) and started on loopback as a container would start it.

var build struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// TestMain removes the bridge binary built for the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
	os.Exit(code)
}

// bridgeBinary builds the bridge once per test binary and returns its path.
func bridgeBinary(t *testing.T) string {
	t.Helper()
	build.once.Do(func() {
		build.dir, build.err = os.MkdirTemp("", "deploycheck-")
		if build.err != nil {
			return
		}
		build.path = filepath.Join(build.dir, "bridge")
		cmd := exec.Command("scripts/build.sh", build.path)
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("scripts/build.sh: %w\n%s", err, out)
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.path
}

// syncBuffer is a log both the process and the test touch.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// process is a bridge command running in the background.
type process struct {
	cmd  *exec.Cmd
	log  *syncBuffer
	done chan struct{}
	err  error
}

// start runs the bridge with args in dir, with only the variables env (as env -i would: what a
// container's spec gives it), and kills it when the test ends if it still runs.
func start(t *testing.T, dir string, env []string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(bridgeBinary(t), args...), log: &syncBuffer{}, done: make(chan struct{})}
	p.cmd.Dir, p.cmd.Env = dir, env
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// stop sends SIGTERM, as the kubelet does, and waits at most grace for the exit (the kubelet's
// SIGKILL comes then); it returns how long the bridge took.
func (p *process) stop(t *testing.T, grace time.Duration) time.Duration {
	t.Helper()
	t0 := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(grace):
		t.Fatalf("bridge still running %v after SIGTERM (the kubelet kills it then); its log:\n%s", grace, p.log)
	}
	if p.err != nil {
		t.Fatalf("bridge exited with %v after SIGTERM; its log:\n%s", p.err, p.log)
	}
	return time.Since(t0)
}

// freePort returns a loopback port nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitFor polls cond until it holds, for at most a minute (a wait, not a measure: the bridge
// usually needs a few seconds); then the test fails with cond's last word and p's log.
func waitFor(t *testing.T, p *process, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ok, last := cond()
		if ok {
			return
		}
		select {
		case <-p.done:
			t.Fatalf("waiting for %s: the bridge exited (%v); its log:\n%s", what, p.err, p.log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: still %s after a minute; the bridge's log:\n%s", what, last, p.log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// get returns the status and body of GET url.
func get(url string) (int, []byte, error) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// scrape reads url as Prometheus's text format, parsed by Prometheus's own parser.
func scrape(url string) (map[string]*dto.MetricFamily, error) {
	status, body, err := get(url)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %d %s", url, status, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(bytes.NewReader(body))
}

// copyFile copies a file of the repository to dst.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, src))
	if err == nil {
		err = os.WriteFile(dst, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}
