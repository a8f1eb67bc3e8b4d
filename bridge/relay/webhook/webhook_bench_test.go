package webhook_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
)

// benchBody is a 1 KB body, the size of a thin payload with some detail.
var benchBody = bytes.Repeat([]byte("x"), 1024)

// BenchmarkSign signs a 1 KB body with one secret (one attempt's signature). Compare runs with
// benchstat: go test ./bridge/relay/webhook -run '^$' -bench . -count 10 > new.txt
func BenchmarkSign(b *testing.B) {
	s, err := webhook.NewSecret()
	if err != nil {
		b.Fatal(err)
	}
	ts := time.Unix(1_700_000_000, 0)
	b.ReportAllocs()
	b.SetBytes(int64(len(benchBody)))
	for b.Loop() {
		s.Sign("msg_01", ts, benchBody)
	}
}

// BenchmarkHeaders makes an attempt's three headers with one secret and with two (while a
// secret rotates, every attempt carries both signatures).
func BenchmarkHeaders(b *testing.B) {
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprint("secrets=", n), func(b *testing.B) {
			secrets := make([]webhook.Secret, n)
			for i := range secrets {
				secrets[i], _ = webhook.NewSecret()
			}
			ts := time.Unix(1_700_000_000, 0)
			b.ReportAllocs()
			b.SetBytes(int64(len(benchBody)))
			for b.Loop() {
				webhook.Headers("msg_01", ts, benchBody, secrets...)
			}
		})
	}
}

// BenchmarkVerify checks a signed 1 KB delivery as a receiver does.
func BenchmarkVerify(b *testing.B) {
	s, _ := webhook.NewSecret()
	ts := time.Now()
	h := webhook.Headers("msg_01", ts, benchBody, s)
	b.ReportAllocs()
	b.SetBytes(int64(len(benchBody)))
	for b.Loop() {
		if err := webhook.Verify(h, benchBody, ts, time.Minute, s); err != nil {
			b.Fatal(err)
		}
	}
}
