package natstest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// EnvServer names the variable holding the path of the nats-server binary for Server; without
// it, /usr/sbin/nats-server, then PATH.
const EnvServer = "BRIDGE_TEST_NATS_SERVER"

// Server is a nats-server process of the test's own, with JetStream and its store in a
// temporary directory, on a free loopback port, for tests that stop and start it under a
// running bridge. Its streams survive a restart (the store directory is kept).
type Server struct {
	t     testing.TB
	bin   string
	store string
	port  int
	cmd   *exec.Cmd
	done  chan struct{}
}

// NewServer starts a server; it is stopped when the test ends. Without the binary the test
// skips, or fails under CI=true.
func NewServer(t testing.TB) *Server {
	t.Helper()
	bin := os.Getenv(EnvServer)
	if bin == "" {
		bin = "/usr/sbin/nats-server"
		if _, err := os.Stat(bin); err != nil {
			bin, _ = exec.LookPath("nats-server")
		}
	}
	if bin == "" {
		unavailable(t, "nats-server not found (set "+EnvServer+")")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("natstest: %v", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &Server{t: t, bin: bin, store: t.TempDir(), port: port}
	s.Start()
	t.Cleanup(func() {
		if s.cmd != nil {
			s.cmd.Process.Kill()
			<-s.done
		}
	})
	return s
}

// URL returns the server's client URL.
func (s *Server) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", s.port) }

// Start starts the server and waits until it accepts connections (up to 30 s).
func (s *Server) Start() {
	s.t.Helper()
	log, err := os.OpenFile(filepath.Join(s.store, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		s.t.Fatalf("natstest: %v", err)
	}
	defer log.Close()
	cmd := exec.Command(s.bin, "-a", "127.0.0.1", "-p", fmt.Sprint(s.port), "-js", "-sd", filepath.Join(s.store, "js"))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("natstest: start nats-server: %v", err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func() { cmd.Wait(); close(s.done) }()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.port), time.Second); err == nil {
			c.Close()
			return
		}
		select {
		case <-s.done:
			text, _ := os.ReadFile(log.Name())
			s.t.Fatalf("natstest: nats-server exited at start: %s", text)
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatal("natstest: nats-server did not accept connections within 30 s")
		}
	}
}

// Stop stops the server (SIGTERM, then SIGKILL after 10 s) and waits for it to exit.
func (s *Server) Stop() {
	s.t.Helper()
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
}

// Restart stops the server and starts it again at once.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.Start()
}
