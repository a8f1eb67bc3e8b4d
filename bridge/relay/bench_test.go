package relay_test

import (
	"context"
	"io"
	"testing"

	"github.com/transcript-bridge/bridge/bench"
)

// BenchmarkRelay runs the relay workload of bridge bench (bench.Relay: 10 endpoints, ~1 KB
// payloads, a drained backlog beside a bare net/http loop, lag at half the throughput, one
// endpoint timing out) and reports its figures, in benchstat's format. Run:
// go test ./bridge/relay -run '^$' -bench Relay -benchtime 1x
// With -short (CI's pass that keeps the benchmarks from rotting) a small workload: the figures
// are then a smoke test, not a measurement. bridge bench relay prints the same as a table.
func BenchmarkRelay(b *testing.B) {
	for range b.N {
		rep, err := bench.Relay(context.Background(), bench.Env{Dir: b.TempDir(), Short: testing.Short(), Log: io.Discard})
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range rep.Results {
			b.ReportMetric(r.Value, r.Name+"-"+r.Unit)
			if r.Reference != nil {
				b.ReportMetric(*r.Reference, r.Name+"-reference-"+r.Unit)
			}
		}
	}
}
