package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/transcript-bridge/bridge/sandbox"
)

// SoakPeerCommand is the hidden subcommand of bridge bench that runs a soak's counterparts
// (SoakPeer): the soak starts this executable again as `bridge bench soak-peer`, so the
// sandbox's database, page cache and stored transcripts, and the endpoints' server side, are
// not counted in the bridge's memory, goroutines and open files.
const SoakPeerCommand = "soak-peer"

// soakPeerReady is the first line a soak peer prints: where its two servers listen.
type soakPeerReady struct {
	API   string `json:"api"`   // the sandbox's base URL (faults injected)
	Hooks string `json:"hooks"` // the endpoints' receiver
	PID   int    `json:"pid"`
}

// soakPeerCounts is the last line a soak peer prints, once its input is closed.
type soakPeerCounts struct {
	OK      int64 `json:"ok"`      // deliveries answered 2xx
	Refused int64 `json:"refused"` // deliveries answered 500 in fault windows
}

// SoakPeer runs a soak's counterparts until in reaches its end (the soak closes the pipe) or
// ctx is done: the sandbox (its database and media in dir, processing at 0.01× real time)
// behind a fault injector, and the endpoints' receiver, each on loopback. For period/4 of
// every period, a third of the API's answers are 503 and a third of the endpoints' 500. It
// prints one JSON line with the servers' URLs when they listen, and one with the receiver's
// counts before it returns.
func SoakPeer(ctx context.Context, dir string, period time.Duration, in io.Reader, out io.Writer) error {
	seed := &sandbox.Seed{Workspaces: []sandbox.SeedWorkspace{{Name: "Acme", Plan: "pro", BalanceMinutes: 1000000,
		Limits:  sandbox.SeedLimits{UploadsPerDay: 100000},
		Members: []sandbox.SeedMember{{Email: "owner@acme.test", Role: "owner"}, {Email: trackingAuthor, Role: "user"}},
		Keys: []sandbox.SeedKey{{Key: trackingKey, Member: "owner@acme.test",
			Scopes: []string{"read", "uploads:write", "reports:write", "transcriptions:delete", "members:write"}}},
	}}}
	sb, err := sandbox.New(ctx, sandbox.Options{DBPath: filepath.Join(dir, "sandbox.db"), Seed: seed, MediaDir: dir, TimeScale: 0.01})
	if err != nil {
		return fmt.Errorf("soak peer: sandbox: %w", err)
	}
	defer sb.Close()
	var apiFaulty atomic.Bool
	rx := &soakReceiver{}
	api := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if apiFaulty.Load() && rand.IntN(3) == 0 {
			w.Header().Set("Retry-After", "1")
			http.Error(w, `{"error":{"code":"unavailable","message":"soak fault"}}`, http.StatusServiceUnavailable)
			return
		}
		sb.ServeHTTP(w, req)
	}))
	hooks := httptest.NewUnstartedServer(rx)
	for _, s := range []*httptest.Server{api, hooks} {
		s.Config.ErrorLog = log.New(io.Discard, "", 0)
		s.Start()
		defer s.Close()
	}
	if err := json.NewEncoder(out).Encode(soakPeerReady{API: api.URL + sandbox.BasePath, Hooks: hooks.URL, PID: os.Getpid()}); err != nil {
		return fmt.Errorf("soak peer: %w", err)
	}
	closed := make(chan struct{})
	go func() { io.Copy(io.Discard, in); close(closed) }()
	fault := time.NewTicker(period)
	defer fault.Stop()
	for done := false; !done; {
		select {
		case <-fault.C:
			apiFaulty.Store(true)
			rx.faulty.Store(true)
			time.AfterFunc(period/4, func() { apiFaulty.Store(false); rx.faulty.Store(false) })
		case <-closed:
			done = true
		case <-ctx.Done():
			done = true
		}
	}
	if err := json.NewEncoder(out).Encode(soakPeerCounts{OK: rx.ok.Load(), Refused: rx.refused.Load()}); err != nil {
		return fmt.Errorf("soak peer: %w", err)
	}
	return nil
}

// soakReceiver is the endpoints' side: it reads each body and answers 200, or 500 to a third
// of the requests while faulty is set. It keeps counts only, so it holds no more memory at the
// end than at the start.
type soakReceiver struct {
	faulty      atomic.Bool
	ok, refused atomic.Int64
}

func (rx *soakReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	if rx.faulty.Load() && rand.IntN(3) == 0 {
		rx.refused.Add(1)
		http.Error(w, "soak fault", http.StatusInternalServerError)
		return
	}
	rx.ok.Add(1)
}

// soakPeer is the soak's side of a running peer process.
type soakPeer struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines *bufio.Scanner
	soakPeerReady
}

// startPeer starts this executable as `bridge bench soak-peer` over dir with the fault period,
// and waits for its servers to listen.
func startPeer(ctx context.Context, dir string, period time.Duration) (_ *soakPeer, err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("peer: %w", err)
	}
	cmd := exec.CommandContext(ctx, exe, "bench", SoakPeerCommand, "--dir", dir, "--fault-period", period.String())
	cmd.Env = append(os.Environ(), "BRIDGE_TEST_CHILD=1") // a test binary runs as bridge (TestMain)
	cmd.Stderr = os.Stderr
	p := &soakPeer{cmd: cmd}
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("peer: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("peer: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("peer: start %s: %w", exe, err)
	}
	p.lines = bufio.NewScanner(stdout)
	if !p.lines.Scan() {
		p.stdin.Close()
		cmd.Wait()
		return nil, fmt.Errorf("peer: exited before it listened: %v", p.lines.Err())
	}
	if err := json.Unmarshal(p.lines.Bytes(), &p.soakPeerReady); err != nil {
		p.stop()
		return nil, fmt.Errorf("peer: printed %q: %w", p.lines.Bytes(), err)
	}
	return p, nil
}

// rssAnon returns the peer's anonymous resident memory in MiB (0 when it cannot be read).
func (p *soakPeer) rssAnon() float64 {
	kb, err := procStatusOf(strconv.Itoa(p.PID), "RssAnon")
	if err != nil {
		return 0
	}
	return float64(kb) / (1 << 20)
}

// stop closes the peer's input, reads its counts and waits for it to exit.
func (p *soakPeer) stop() (soakPeerCounts, error) {
	p.stdin.Close()
	var counts soakPeerCounts
	var err error
	if p.lines.Scan() {
		err = json.Unmarshal(p.lines.Bytes(), &counts)
	} else {
		err = fmt.Errorf("peer printed no counts: %v", p.lines.Err())
	}
	if werr := p.cmd.Wait(); werr != nil && err == nil {
		err = fmt.Errorf("peer: %w", werr)
	}
	return counts, err
}
