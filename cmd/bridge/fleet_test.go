package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge/postgres"
	"github.com/transcript-bridge/bridge/sandbox/sandboxtest"
)

// fleet is n replicas of `bridge run` (child processes of the test binary) sharing one
// configuration file, each restartable after a SIGKILL. It keeps the last lines each process
// wrote, and notes every process that ended without being killed or stopped.
type fleet struct {
	t      *testing.T
	config string

	mu         sync.Mutex
	procs      []*replicaProc
	starts     int
	kills      int
	all        []*logTail // the logs of every process, for counting
	unexpected []string   // processes that ended on their own, or did not stop cleanly
}

// replicaProc is one process of a replica.
type replicaProc struct {
	cmd     *exec.Cmd
	log     *logTail
	done    chan struct{} // closed once the process has been waited for
	err     error         // its exit, valid once done is closed
	stopped bool          // killed or stopped by the test (under fleet.mu)
}

func newFleet(t *testing.T, config string, n int) *fleet {
	f := &fleet{t: t, config: config, procs: make([]*replicaProc, n)}
	for i := range n {
		f.start(i)
	}
	t.Cleanup(func() { f.stop(10 * time.Second) }) // a failed test leaves no child running
	return f
}

// start starts replica i (anew: a new process is a new replica, with a new name).
func (f *fleet) start(i int) {
	f.t.Helper()
	cmd := exec.Command(os.Args[0], "run", "--config", f.config)
	cmd.Env = append(os.Environ(), "BRIDGE_TEST_CHILD=1", "BRIDGE_FAILPOINTS=", "BRIDGE_API_KEY="+sandboxtest.OwnerKey)
	p := &replicaProc{cmd: cmd, log: &logTail{max: 40, watch: logWatch}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		f.t.Fatalf("start replica %d: %v", i, err)
	}
	f.mu.Lock()
	f.procs[i] = p
	f.all = append(f.all, p.log)
	f.starts++
	f.mu.Unlock()
	go func() {
		p.err = cmd.Wait()
		f.mu.Lock()
		if !p.stopped {
			f.unexpected = append(f.unexpected, fmt.Sprintf("replica %d ended on its own (%v); last lines:\n%s", i, p.err, p.log))
		}
		f.mu.Unlock()
		close(p.done)
	}()
}

// kill SIGKILLs replica i and waits for it to die.
func (f *fleet) kill(i int) {
	f.mu.Lock()
	p := f.procs[i]
	p.stopped = true
	f.kills++
	f.mu.Unlock()
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop asks every running replica to stop (SIGTERM), waits up to grace for each, then kills
// what is left. A replica that fails, or does not stop in time, is noted as unexpected. (The
// test binary's child mode runs without a signal handler, so SIGTERM ends it at once: that
// counts as stopping.)
func (f *fleet) stop(grace time.Duration) {
	f.mu.Lock()
	var running []*replicaProc
	for _, p := range f.procs {
		if p != nil && !p.stopped {
			p.stopped = true
			running = append(running, p)
		}
	}
	f.mu.Unlock()
	for _, p := range running {
		p.cmd.Process.Signal(syscall.SIGTERM)
	}
	deadline := time.After(grace)
	for _, p := range running {
		select {
		case <-p.done:
			if p.err != nil && !terminated(p.err) {
				f.note(fmt.Sprintf("a replica stopped with %v; last lines:\n%s", p.err, p.log))
			}
		case <-deadline:
			p.cmd.Process.Kill()
			<-p.done
			f.note(fmt.Sprintf("a replica did not stop within %s of SIGTERM; last lines:\n%s", grace, p.log))
		}
	}
}

// terminated reports whether err is the exit of a process ended by SIGTERM.
func terminated(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM
}

func (f *fleet) note(s string) {
	f.mu.Lock()
	f.unexpected = append(f.unexpected, s)
	f.mu.Unlock()
}

// problems returns what went wrong with the processes so far.
func (f *fleet) problems() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.unexpected...)
}

// counts returns how many processes were started and killed.
func (f *fleet) counts() (starts, kills int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.starts, f.kills
}

// tails returns the last lines of every replica's current process.
func (f *fleet) tails() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var b strings.Builder
	for i, p := range f.procs {
		fmt.Fprintf(&b, "--- replica %d ---\n%s\n", i, p.log)
	}
	return b.String()
}

// logWatch are the log lines the fleet counts, by what they contain.
var logWatch = []string{"level=ERROR", "level=WARN", "export catch-up", "empty window", "lease lost", "store unreachable", startWait}

// startWait is in the WARN of a replica that starts while its store cannot be reached.
const startWait = "bridge run waits for it"

// logCounts sums, over every process the fleet started, the lines containing each of logWatch.
func (f *fleet) logCounts() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for _, l := range f.all {
		l.mu.Lock()
		for k, n := range l.seen {
			out[k] += n
		}
		l.mu.Unlock()
	}
	return out
}

// logTail is an io.Writer keeping the last max lines written to it, and counting those that
// contain each of watch.
type logTail struct {
	mu        sync.Mutex
	max       int
	watch     []string
	seen      map[string]int
	partial   []byte
	lines     []string
	addr      string   // where the process's server listens, once it said so
	outages   []string // its "store reachable again" lines
	storeErrs int      // lines naming an unreachable store's error, other than its WARN
}

// listening is the line of a process whose server listens, with the address.
var listening = regexp.MustCompile(`msg="server listening" addr=(\S+)`)

// addrs returns, per replica, where its current process's server listens ("" until it said so).
func (f *fleet) addrs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, len(f.procs))
	for i, p := range f.procs {
		p.log.mu.Lock()
		out[i] = p.log.addr
		p.log.mu.Unlock()
	}
	return out
}

func (l *logTail) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		line := string(l.partial[:i])
		if m := listening.FindStringSubmatch(line); m != nil {
			l.addr = m[1]
		}
		if strings.Contains(line, `msg="store reachable again"`) {
			l.outages = append(l.outages, line)
		} else if !strings.Contains(line, `msg="store unreachable;`) && postgres.UnreachableText(line) {
			l.storeErrs++
		}
		for _, w := range l.watch {
			if strings.Contains(line, w) {
				if l.seen == nil {
					l.seen = map[string]int{}
				}
				l.seen[w]++
			}
		}
		l.lines = append(l.lines, line)
		if len(l.lines) > l.max {
			l.lines = l.lines[len(l.lines)-l.max:]
		}
		l.partial = l.partial[i+1:]
	}
	return len(p), nil
}

func (l *logTail) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
