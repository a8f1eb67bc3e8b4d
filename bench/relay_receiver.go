package bench

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/transcript-bridge/bridge/bridge/relay"
)

// receiver is the CRM side of the relay workloads: an HTTP server on loopback answering 200
// at once, after reading the body, noting per path when each message arrived, with its job
// id. A path in slow answers only after 11 s (past a 10 s timeout).
type receiver struct {
	url      string
	srv      *http.Server
	mu       sync.Mutex
	receipts map[string][]receipt
	slow     map[string]bool
}

// receipt is one message's arrival: its job, and when it came.
type receipt struct {
	job string
	at  time.Time
}

func newReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("receiver: %w", err)
	}
	rx := &receiver{url: "http://" + ln.Addr().String(), receipts: map[string][]receipt{}, slow: map[string]bool{}}
	rx.srv = &http.Server{Handler: rx, ReadHeaderTimeout: 10 * time.Second}
	go rx.srv.Serve(ln)
	return rx, nil
}

// ServeHTTP implements http.Handler.
func (rx *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rx.mu.Lock()
	slow := rx.slow[r.URL.Path]
	rx.mu.Unlock()
	if slow {
		select {
		case <-time.After(11 * time.Second):
		case <-r.Context().Done():
		}
		return
	}
	var m struct {
		Data struct {
			JobID string `json:"job_id"`
		} `json:"data"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	at := time.Now()
	rx.mu.Lock()
	rx.receipts[r.URL.Path] = append(rx.receipts[r.URL.Path], receipt{m.Data.JobID, at})
	rx.mu.Unlock()
}

// reset forgets the receipts noted so far and sets which paths time out.
func (rx *receiver) reset(slow ...string) {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	rx.receipts = map[string][]receipt{}
	rx.slow = map[string]bool{}
	for _, p := range slow {
		rx.slow[p] = true
	}
}

// taken returns the receipts noted on every path but those in skip.
func (rx *receiver) taken(skip ...string) []receipt {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	var out []receipt
	for p, l := range rx.receipts {
		if !slices.Contains(skip, p) {
			out = append(out, l...)
		}
	}
	return out
}

func (rx *receiver) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	rx.srv.Shutdown(ctx)
	rx.srv.Close()
}

// bareLoop is the reference: n POSTs of a body like the relay's to the same endpoints, over
// the same HTTP client as the relay's (keep-alive, 4 idle connections per endpoint), with the
// same concurrency (relay's per-endpoint 4 on each of the endpoints), no store, no signing. It
// returns POSTs per second.
func bareLoop(ctx context.Context, rx *receiver, n, perEndpoint int) (float64, error) {
	msg, _ := json.Marshal(map[string]any{"type": "transcription.completed", "timestamp": time.Now().UTC(),
		"data": map[string]any{"note": note, "job_id": "0194f5c2-7d3e-7a10-9c4b-2f1e8d6a5b3c"}})
	jobs := make(chan struct{}, n)
	for range n {
		jobs <- struct{}{}
	}
	close(jobs)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	start := time.Now()
	for e := range relayEndpoints {
		client := relay.NewHTTPClient(true, 10*time.Second)
		url := fmt.Sprintf("%s/crm%d", rx.url, e)
		for range perEndpoint {
			wg.Go(func() {
				for range jobs {
					req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(msg))
					req.Header.Set("Content-Type", "application/json")
					resp, err := client.Do(req)
					if err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode != http.StatusOK {
							err = fmt.Errorf("bare loop: %s", resp.Status)
						}
					}
					if err != nil {
						mu.Lock()
						first = cmp.Or(first, err)
						mu.Unlock()
						return
					}
				}
			})
		}
	}
	wg.Wait()
	if first != nil {
		return 0, first
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// percentile returns the p-th percentile (0–100) of ds in milliseconds; it sorts ds.
func percentile(ds []time.Duration, p float64) float64 {
	slices.Sort(ds)
	return float64(quantile(ds, p/100).Microseconds()) / 1000
}

// quantile returns quantile q (0–1) of sorted, nearest rank; 0 when it is empty.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}
