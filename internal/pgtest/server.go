package pgtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// EnvBin names the variable holding the directory of PostgreSQL's server binaries (initdb,
// pg_ctl, postgres) for Server; without it, /usr/lib/postgresql/<version>/bin is searched,
// newest first, then PATH.
const EnvBin = "BRIDGE_TEST_POSTGRES_BIN"

// Server is a PostgreSQL cluster of the test's own (initdb in a temporary directory, on a free
// loopback port, trust authentication, fsync off), for tests that stop, start and restart the
// server under a running bridge. Run as root, its processes run as the user "postgres" (or
// "nobody"), since PostgreSQL refuses to run as root.
type Server struct {
	t        testing.TB
	bin      string
	data     string
	port     int
	cred     *syscall.Credential
	settings []string
}

// NewServer creates and starts a cluster; it is stopped (immediate mode) and removed when the
// test ends. Without PostgreSQL's binaries the test skips, or fails under CI=true. Each of
// settings ("name=value") overrides the server's (see options), e.g. "fsync=on".
func NewServer(t testing.TB, settings ...string) *Server {
	t.Helper()
	bin := serverBin()
	if bin == "" {
		unavailable(t, "initdb and pg_ctl not found (set "+EnvBin+")")
	}
	s := &Server{t: t, bin: bin, port: freePort(t), settings: settings}
	root, err := os.MkdirTemp("", "pgtest-server-")
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	s.data = filepath.Join(root, "data")
	if os.Geteuid() == 0 {
		s.cred = nonRoot(t)
		if err := os.Chown(root, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			t.Fatalf("pgtest: %v", err)
		}
	}
	if err := os.Chmod(root, 0o700); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	s.run("initdb", "-D", s.data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C")
	t.Cleanup(func() {
		// Immediate: a test that failed half-way leaves no server behind, whatever its state.
		cmd := s.command("pg_ctl", "stop", "-D", s.data, "-m", "immediate", "-w", "-t", "30")
		_ = cmd.Run()
	})
	s.Start()
	return s
}

// DSN returns the DSN of the cluster's "postgres" database, as BRIDGE_TEST_POSTGRES_DSN would
// name it: NewOn makes a test's database from it.
func (s *Server) DSN() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.port)
}

// Start starts the server and waits until it accepts connections.
func (s *Server) Start() {
	s.t.Helper()
	s.run("pg_ctl", "start", "-D", s.data, "-w", "-t", "60", "-l", filepath.Join(filepath.Dir(s.data), "server.log"),
		"-o", s.options())
}

// Stop stops the server in fast mode: open sessions are cut, their transactions rolled back.
func (s *Server) Stop() {
	s.t.Helper()
	s.run("pg_ctl", "stop", "-D", s.data, "-m", "fast", "-w", "-t", "60")
}

// Restart stops the server in fast mode and starts it again at once.
func (s *Server) Restart() {
	s.t.Helper()
	s.run("pg_ctl", "restart", "-D", s.data, "-m", "fast", "-w", "-t", "60", "-o", s.options())
}

// options are the server's settings: loopback only, its socket beside its data, no fsync,
// 200 connections; then NewServer's settings (the last of a name wins).
func (s *Server) options() string {
	o := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200",
		s.port, filepath.Dir(s.data))
	for _, kv := range s.settings {
		o += " -c " + kv
	}
	return o
}

func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Dir = filepath.Dir(s.data)
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	return cmd
}

// run runs one of the server's programs and fails the test with its output when it fails.
func (s *Server) run(name string, args ...string) {
	s.t.Helper()
	cmd := s.command(name, args...)
	// A file, not a pipe: the server pg_ctl starts keeps its descriptors, and Run would wait
	// for a pipe to close until the server stops.
	out, err := os.CreateTemp("", "pgtest-"+name+"-")
	if err != nil {
		s.t.Fatalf("pgtest: %v", err)
	}
	defer os.Remove(out.Name())
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		text, _ := os.ReadFile(out.Name())
		log, _ := os.ReadFile(filepath.Join(filepath.Dir(s.data), "server.log"))
		s.t.Fatalf("pgtest: %s %v: %v\n%s\nserver log:\n%s", name, args, err, text, tail(log, 2000))
	}
}

// serverBin finds the directory holding initdb and pg_ctl.
func serverBin() string {
	if d := os.Getenv(EnvBin); d != "" {
		return d
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i]
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

// nonRoot returns the credentials of the user "postgres", else "nobody".
func nonRoot(t testing.TB) *syscall.Credential {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	unavailable(t, "running as root and no user postgres or nobody to run PostgreSQL as")
	return nil
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
