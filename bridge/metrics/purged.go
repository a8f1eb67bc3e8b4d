package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/transcript-bridge/bridge/bridge"
)

// Purged counts what the retention purge removed: bridge_purged_total{kind}, each kind at zero
// from the start (bridge.PurgeMetrics). A nil *Purged does nothing.
type Purged struct{ c *prometheus.CounterVec }

// NewPurged registers bridge_purged_total on reg.
func NewPurged(reg prometheus.Registerer) (*Purged, error) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bridge_purged_total",
		Help: "Rows (export run folders for exports) the retention purge removed past their age, by kind: deliveries, dead_letters, jobs, exports."}, []string{"kind"})
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	for _, k := range append(append([]string(nil), bridge.RetentionKinds...), bridge.RetainExports) {
		c.WithLabelValues(k)
	}
	return &Purged{c}, nil
}

// Purged implements bridge.PurgeMetrics.
func (p *Purged) Purged(kind string, n int) {
	if p != nil {
		p.c.WithLabelValues(kind).Add(float64(n))
	}
}
