// Package metrics is the bridge's Prometheus instrumentation: Metrics records what the
// pipeline, the relay, the exporter and the API client report through their own small Metrics
// interfaces (none of them imports Prometheus), and StoreCollector reads, at scrape time, what
// the store knows (jobs by state, held jobs by reason, dead letters, endpoints switched off,
// each export's last success), so every replica of one store reports the same figures. Both
// register on a registry the caller owns (cmd creates one; never Prometheus's global default).
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Options name what is configured, so that each series exists (at zero) from the start and
// rates and alerts work before the first event.
type Options struct {
	// Endpoints are the webhook endpoints' names.
	Endpoints []string
	// Exports are the scheduled exports' names.
	Exports []string
	// Sources are the sources' names.
	Sources []string
}

// Metrics records the bridge's events as Prometheus series. Every method of a nil *Metrics
// does nothing, so a part built without metrics needs no stand-in.
type Metrics struct {
	uploads         *prometheus.CounterVec
	uploadBytes     prometheus.Counter
	retries         *prometheus.CounterVec
	apiRequests     *prometheus.CounterVec
	limiterWait     *prometheus.HistogramVec
	trackerLag      prometheus.Histogram
	discoveryLag    *prometheus.HistogramVec
	lastScan        *prometheus.GaugeVec
	sourceUp        *prometheus.GaugeVec
	scanErrors      *prometheus.CounterVec
	deliveries      *prometheus.CounterVec
	deliveryLatency *prometheus.HistogramVec
	exportRuns      *prometheus.CounterVec
}

// Label values the series start with (see Options).
var (
	uploadOutcomes   = []string{"uploaded", "replayed", "adopted", "failed", "skipped", "held", "remapped"}
	deliveryOutcomes = []string{"delivered", "filtered", "failed", "dead", "gone"}
	retryStages      = []string{"upload", "delivery"}
	exportOutcomes   = []string{"completed", "failed"}
)

// New returns the bridge's metrics, registered on reg with each configured series at zero. It
// fails when reg already holds a metric of the same name.
func New(reg prometheus.Registerer, o Options) (*Metrics, error) {
	m := &Metrics{
		uploads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bridge_uploads_total",
			Help: "Upload attempts by outcome: uploaded, replayed (an earlier attempt's answer), adopted (found upstream by bridge_job), failed, skipped, held, remapped."}, []string{"outcome"}),
		uploadBytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "bridge_upload_bytes_total",
			Help: "Bytes of recordings sent to the API, every attempt included."}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bridge_retries_total",
			Help: "Attempts that failed in a way that may pass and are tried again later, by stage: upload (same key), delivery (on the endpoint's schedule)."}, []string{"stage"}),
		apiRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bridge_api_requests_total",
			Help: "HTTP requests to the transcription API (every attempt) by route template, method and status (\"error\": no answer)."}, []string{"route", "method", "status"}),
		limiterWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "bridge_api_limiter_wait_seconds",
			Help:    "Time a request waited for the client-side rate limiter, by class (data, delete).",
			Buckets: []float64{0.001, 0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}}, []string{"class"}),
		trackerLag: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "bridge_tracker_lag_seconds",
			Help:    "From a transcription's last change at the API (its updated_at, when it reached a final status) to the tracker noticing it.",
			Buckets: []float64{1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600}}),
		discoveryLag: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "bridge_source_discovery_lag_seconds",
			Help:    "From a recording's time at its source (its modification time) to the bridge storing it as a job, by source.",
			Buckets: []float64{1, 5, 10, 30, 60, 300, 600, 1800, 3600, 4 * 3600, 12 * 3600, 24 * 3600}}, []string{"source"}),
		lastScan: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "bridge_source_last_scan_timestamp_seconds",
			Help: "When this process last scanned the source successfully (Unix time; 0 before the first; a replica that does not hold the source's lease does not scan it)."}, []string{"source"}),
		sourceUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "bridge_source_up",
			Help: "1 when this process's last scan of the source succeeded, 0 when it failed (absent before this process scans the source)."}, []string{"source"}),
		scanErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bridge_source_scan_errors_total",
			Help: "Scans of the source that failed in this process: the source could not be listed (a folder gone, credentials refused, a listing that failed)."}, []string{"source"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bridge_deliveries_total",
			Help: "Webhook delivery attempts by endpoint and outcome: delivered (2xx), filtered, failed (retried later), dead (given up), gone (410: endpoint disabled)."}, []string{"endpoint", "outcome"}),
		deliveryLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "bridge_delivery_latency_seconds",
			Help:    "From an event's commit to the endpoint's 2xx answer, retries included, by endpoint.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 6 * 3600, 24 * 3600}}, []string{"endpoint"}),
		exportRuns: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "bridge_export_runs_total",
			Help: "Export runs this process finished, by export and outcome (completed, failed)."}, []string{"export", "outcome"}),
	}
	for _, c := range []prometheus.Collector{m.uploads, m.uploadBytes, m.retries, m.apiRequests, m.limiterWait, m.trackerLag,
		m.discoveryLag, m.lastScan, m.sourceUp, m.scanErrors, m.deliveries, m.deliveryLatency, m.exportRuns} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	m.start(o)
	return m, nil
}

// start creates the series of o's names at zero.
func (m *Metrics) start(o Options) {
	for _, v := range uploadOutcomes {
		m.uploads.WithLabelValues(v)
	}
	for _, v := range retryStages {
		m.retries.WithLabelValues(v)
	}
	for _, e := range o.Endpoints {
		for _, v := range deliveryOutcomes {
			m.deliveries.WithLabelValues(e, v)
		}
	}
	for _, e := range o.Exports {
		for _, v := range exportOutcomes {
			m.exportRuns.WithLabelValues(e, v)
		}
	}
	for _, s := range o.Sources {
		m.lastScan.WithLabelValues(s)
		m.scanErrors.WithLabelValues(s)
	}
}

// Upload counts an upload attempt's outcome (bridge.Metrics).
func (m *Metrics) Upload(outcome string) {
	if m != nil {
		m.uploads.WithLabelValues(outcome).Inc()
	}
}

// Retry counts an attempt tried again later at stage (bridge.Metrics, relay.Metrics).
func (m *Metrics) Retry(stage string) {
	if m != nil {
		m.retries.WithLabelValues(stage).Inc()
	}
}

// TrackerLag observes the tracker's lag (bridge.Metrics).
func (m *Metrics) TrackerLag(d time.Duration) {
	if m != nil {
		m.trackerLag.Observe(d.Seconds())
	}
}

// Discovered observes a recording's discovery lag at source (bridge.Metrics).
func (m *Metrics) Discovered(source string, lag time.Duration) {
	if m != nil {
		m.discoveryLag.WithLabelValues(source).Observe(lag.Seconds())
	}
}

// Scanned notes a successful scan of source (bridge.Metrics).
func (m *Metrics) Scanned(source string, at time.Time) {
	if m != nil {
		m.lastScan.WithLabelValues(source).Set(float64(at.UnixNano()) / 1e9)
		m.sourceUp.WithLabelValues(source).Set(1)
	}
}

// ScanFailed notes a failed scan of source: it is down, and its errors count one more
// (bridge.Metrics).
func (m *Metrics) ScanFailed(source string) {
	if m != nil {
		m.sourceUp.WithLabelValues(source).Set(0)
		m.scanErrors.WithLabelValues(source).Inc()
	}
}

// APIRequest counts a request to the API (api.Metrics).
func (m *Metrics) APIRequest(route, method, status string) {
	if m != nil {
		m.apiRequests.WithLabelValues(route, method, status).Inc()
	}
}

// LimiterWait observes a wait for the client-side limiter (api.Metrics).
func (m *Metrics) LimiterWait(class string, d time.Duration) {
	if m != nil {
		m.limiterWait.WithLabelValues(class).Observe(d.Seconds())
	}
}

// UploadBytes counts bytes sent by an upload attempt (api.Metrics).
func (m *Metrics) UploadBytes(n int64) {
	if m != nil {
		m.uploadBytes.Add(float64(n))
	}
}

// Delivery counts a delivery attempt's outcome at endpoint (relay.Metrics).
func (m *Metrics) Delivery(endpoint, outcome string) {
	if m != nil {
		m.deliveries.WithLabelValues(endpoint, outcome).Inc()
	}
}

// DeliveryLatency observes an accepted delivery's latency from its event's commit
// (relay.Metrics).
func (m *Metrics) DeliveryLatency(endpoint string, d time.Duration) {
	if m != nil {
		m.deliveryLatency.WithLabelValues(endpoint).Observe(d.Seconds())
	}
}

// ExportRun counts a finished export run (export.Metrics).
func (m *Metrics) ExportRun(export, outcome string) {
	if m != nil {
		m.exportRuns.WithLabelValues(export, outcome).Inc()
	}
}
