package sandbox

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FaultSpec gives the probability of each injected fault and a fixed added latency.
// Its text form is "5xx=0.05,429=0.05,reset=0.01,latency=20ms".
type FaultSpec struct {
	// P5xx is the probability of answering 500, 502 or 503 without touching state.
	P5xx float64
	// P429 is the probability of answering 429 rate_limit_exceeded with Retry-After: 1.
	P429 float64
	// PReset is the probability of dropping the connection: half before the request is handled,
	// half after it was handled and committed (the answer is lost, the state change is not).
	PReset float64
	// Latency is added to every API request.
	Latency time.Duration
}

// ParseFaults parses the text form of a FaultSpec; the error names the bad entry.
func ParseFaults(spec string) (FaultSpec, error) {
	var f FaultSpec
	if strings.TrimSpace(spec) == "" {
		return f, nil
	}
	for _, part := range strings.Split(spec, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return f, fmt.Errorf("faults: %q is not name=value", part)
		}
		if name == "latency" {
			d, err := time.ParseDuration(val)
			if err != nil || d < 0 {
				return f, fmt.Errorf("faults: latency %q is not a duration like 20ms", val)
			}
			f.Latency = d
			continue
		}
		p, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return f, fmt.Errorf("faults: %s=%q is not a probability", name, val)
		}
		switch name {
		case "5xx":
			f.P5xx = p
		case "429":
			f.P429 = p
		case "reset":
			f.PReset = p
		default:
			return f, fmt.Errorf("faults: unknown fault %q (want 5xx, 429, reset, latency)", name)
		}
	}
	return f, f.Validate()
}

// Validate checks that each probability is within [0, 1] and that they sum to at most 1.
func (f FaultSpec) Validate() error {
	for name, p := range map[string]float64{"5xx": f.P5xx, "429": f.P429, "reset": f.PReset} {
		if p < 0 || p > 1 {
			return fmt.Errorf("faults: %s=%v is not a probability between 0 and 1", name, p)
		}
	}
	if f.P5xx+f.P429+f.PReset > 1 {
		return fmt.Errorf("faults: probabilities sum to more than 1")
	}
	return nil
}

type faultInjector struct {
	spec FaultSpec
	mu   sync.Mutex
	rng  *rand.Rand
}

func newFaultInjector(spec FaultSpec, seed int64) *faultInjector {
	return &faultInjector{spec: spec, rng: rand.New(rand.NewPCG(uint64(seed), 0x5a4d))}
}

// pick returns the fault to inject for one request: the X-Sandbox-Fault header when present,
// else a random draw from the spec ("" for none).
func (f *faultInjector) pick(r *http.Request) string {
	if h := r.Header.Get("X-Sandbox-Fault"); h != "" {
		return h
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	x := f.rng.Float64()
	switch {
	case x < f.spec.P5xx:
		return []string{"500", "502", "503"}[f.rng.IntN(3)]
	case x < f.spec.P5xx+f.spec.P429:
		return "429"
	case x < f.spec.P5xx+f.spec.P429+f.spec.PReset:
		if f.rng.IntN(2) == 0 {
			return "reset"
		}
		return "reset-after"
	}
	return ""
}

// inject adds latency and applies the fault picked for r. It returns true when the request was
// answered (or dropped) here.
func (f *faultInjector) inject(w http.ResponseWriter, r *http.Request, info *requestInfo, next http.Handler) bool {
	if f.spec.Latency > 0 {
		select {
		case <-time.After(f.spec.Latency):
		case <-r.Context().Done():
		}
	}
	fault := f.pick(r)
	if fault == "" {
		return false
	}
	info.fault = fault
	switch fault {
	case "429":
		writeRetryError(w, r, http.StatusTooManyRequests, "rate_limit_exceeded", "injected fault: rate limit exceeded", 1, nil)
	case "reset":
		panic(http.ErrAbortHandler) // net/http closes the connection without an answer
	case "reset-after":
		// Handle the request for real, then lose the answer.
		next.ServeHTTP(&discardWriter{h: http.Header{}, under: w}, r)
		panic(http.ErrAbortHandler)
	default:
		code, err := strconv.Atoi(fault)
		if err != nil || code < 500 || code > 599 {
			writeError(w, r, http.StatusBadRequest, "invalid_sandbox_fault", "X-Sandbox-Fault must be a 5xx status, 429, reset or reset-after", map[string]any{"value": fault})
			return true
		}
		writeRetryError(w, r, code, "service_unavailable", "injected fault: upstream unavailable", 1, nil)
	}
	return true
}

// discardWriter swallows an answer that the injected fault then loses.
type discardWriter struct {
	h     http.Header
	under http.ResponseWriter
}

// Unwrap gives http.ResponseController the real connection (for read deadlines).
func (d *discardWriter) Unwrap() http.ResponseWriter { return d.under }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}
