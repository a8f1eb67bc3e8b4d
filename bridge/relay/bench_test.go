package relay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
	"github.com/transcript-bridge/bridge/bridge/relay"
	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/connectors"
)

// lagReceiver answers 200 and records, per endpoint path, how long after the event each
// message arrived.
type lagReceiver struct {
	mu    sync.Mutex
	lags  map[string][]time.Duration
	count int
	slow  string // a path that sleeps past the endpoint's timeout
}

func (rx *lagReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == rx.slow {
		time.Sleep(time.Second)
		return
	}
	var m struct {
		Timestamp time.Time `json:"timestamp"`
	}
	json.NewDecoder(r.Body).Decode(&m)
	rx.mu.Lock()
	rx.lags[r.URL.Path] = append(rx.lags[r.URL.Path], time.Since(m.Timestamp))
	rx.count++
	rx.mu.Unlock()
}

func (rx *lagReceiver) received() int {
	rx.mu.Lock()
	defer rx.mu.Unlock()
	return rx.count
}

func percentile(ds []time.Duration, p int) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[min(len(ds)-1, len(ds)*p/100)]
}

// relayRun emits jobs×perJob events while the relay runs against endpoints paths on rx and
// waits for want receipts.
func relayRun(b *testing.B, rx *lagReceiver, srv *httptest.Server, paths []string, jobs, perJob, want int) time.Duration {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bridge.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	s, _ := webhook.NewSecret()
	var eps []*relay.Endpoint
	for i, p := range paths {
		ep, err := relay.NewEndpoint(relay.EndpointConfig{Name: fmt.Sprint("ep", i), URL: srv.URL + p, Secrets: []webhook.Secret{s},
			AllowPrivate: true, Payload: relay.PayloadThin, Timeout: 200 * time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		eps = append(eps, ep)
	}
	recs := make([]connectors.Recording, jobs)
	for i := range recs {
		recs[i] = connectors.Recording{ItemID: fmt.Sprint(i), Version: "1", Name: "a.wav"}
	}
	added, err := store.AddRecordings(ctx, "inbox", recs, "", time.Now())
	if err != nil {
		b.Fatal(err)
	}
	r := withBus(b, store, &relay.Relay{Store: store, Endpoints: eps, Lease: time.Minute})
	go r.Run(ctx, 5*time.Millisecond)
	start := time.Now()
	types := []string{bridge.EventUploaded, bridge.EventReportCompleted, bridge.EventCompleted}
	for i := range added {
		j := &added[i]
		var evs []bridge.Event
		for k := range perJob {
			evs = append(evs, bridge.NewEvent(types[k%len(types)], j, nil))
		}
		j.UpdatedAt = time.Now()
		if err := store.Update(ctx, j, j.State, "", evs...); err != nil {
			b.Fatal(err)
		}
	}
	for rx.received() < want {
		if time.Since(start) > 2*time.Minute {
			b.Fatalf("received %d of %d", rx.received(), want)
		}
		time.Sleep(time.Millisecond)
	}
	return time.Since(start)
}

// BenchmarkRelay delivers events to a local receiver and reports deliveries per second and the
// lag from commit to receipt, beside a bare net/http POST loop to the same receiver (4 at a
// time, as the relay's per-endpoint concurrency); then the healthy endpoints' lag when 1 of 10
// endpoints times out. Run: go test ./bridge/relay -run '^$' -bench Relay -benchtime 1x
// With -short (CI's pass that keeps the benchmarks from rotting) a quarter of the events: the
// figures are then a smoke test, not a measurement.
func BenchmarkRelay(b *testing.B) {
	jobs, perJob := 200, 10
	if testing.Short() {
		jobs = 50
	}
	n := jobs * perJob
	b.Run("one-endpoint", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			rx := &lagReceiver{lags: map[string][]time.Duration{}}
			srv := httptest.NewServer(rx)
			took := relayRun(b, rx, srv, []string{"/crm"}, jobs, perJob, n)
			lags := rx.lags["/crm"]
			b.ReportMetric(float64(n)/took.Seconds(), "deliveries/s")
			b.ReportMetric(float64(percentile(lags, 50).Milliseconds()), "p50-lag-ms")
			b.ReportMetric(float64(percentile(lags, 99).Milliseconds()), "p99-lag-ms")

			// The bare loop: the same number of POSTs of a similar body, 4 at a time.
			body := bytes.Repeat([]byte("x"), 300)
			client := &http.Client{}
			start := time.Now()
			var wg sync.WaitGroup
			next := make(chan struct{}, n)
			for range n {
				next <- struct{}{}
			}
			close(next)
			for range 4 {
				wg.Go(func() {
					for range next {
						resp, err := client.Post(srv.URL+"/bare", "application/json", bytes.NewReader(body))
						if err == nil {
							io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
					}
				})
			}
			wg.Wait()
			bare := float64(n) / time.Since(start).Seconds()
			b.ReportMetric(bare, "bare-posts/s")
			b.ReportMetric(float64(n)/took.Seconds()/bare, "relay/bare")
			srv.Close()
		}
	})
	b.Run("1-of-10-timing-out", func(b *testing.B) {
		for range b.N {
			rx := &lagReceiver{lags: map[string][]time.Duration{}, slow: "/ep0"}
			srv := httptest.NewServer(rx)
			paths := make([]string, 10)
			for i := range paths {
				paths[i] = fmt.Sprint("/ep", i)
			}
			relayRun(b, rx, srv, paths, jobs/4, perJob, 9*(jobs/4)*perJob)
			var healthy []time.Duration
			for p, l := range rx.lags {
				if p != "/ep0" {
					healthy = append(healthy, l...)
				}
			}
			b.ReportMetric(float64(percentile(healthy, 50).Milliseconds()), "healthy-p50-lag-ms")
			b.ReportMetric(float64(percentile(healthy, 99).Milliseconds()), "healthy-p99-lag-ms")
			srv.Close()
		}
	})
}
