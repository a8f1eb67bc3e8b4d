package bridge

import (
	"time"

	"github.com/transcript-bridge/bridge/api"
)

// Metrics hears what the pipeline does, for the bridge's /metrics (cmd wires a Prometheus
// implementation, bridge/metrics; this package imports none). A nil Metrics records nothing.
// What a scrape reads from the store (jobs by state, held jobs by reason) is not here: every
// replica reads it alike at scrape time.
type Metrics interface {
	// Upload counts the outcome of one upload attempt: Upload* constants.
	Upload(outcome string)
	// Retry counts one thing that failed in a way that may pass and will be tried again:
	// stage is RetryUpload here (the relay counts its own).
	Retry(stage string)
	// TrackerLag observes how long after the service finished a transcription (its
	// updated_at) the tracker noticed it.
	TrackerLag(d time.Duration)
	// Discovered observes, for a recording a source just yielded, how long after its time at
	// the source (the recording's ModTime) it was found.
	Discovered(source string, lag time.Duration)
	// Scanned notes a successful scan of source at at: the source is up.
	Scanned(source string, at time.Time)
	// ScanFailed notes a scan of source that failed (the source could not be listed, or what
	// it listed not stored): the source is down until a scan succeeds.
	ScanFailed(source string)
}

// Outcomes of an upload attempt (Metrics.Upload).
const (
	// UploadUploaded: the service took the file (201).
	UploadUploaded = "uploaded"
	// UploadReplayed: the service answered with the transcription of an earlier attempt (200,
	// same Idempotency-Key).
	UploadReplayed = "replayed"
	// UploadAdopted: past the idempotency window, the transcription an earlier attempt made
	// was found upstream by bridge_job and taken over.
	UploadAdopted = "adopted"
	// UploadFailed: the service refused the file for good, or failed it.
	UploadFailed = "failed"
	// UploadSkipped: the file will never be taken (format, size, content, ids).
	UploadSkipped = "skipped"
	// UploadHeld: the job waits (no minutes, a setting or author refused, a source that kept
	// failing).
	UploadHeld = "held"
	// UploadRemapped: the service refused the author; the job goes back through mapping once.
	UploadRemapped = "remapped"
)

// RetryUpload is the stage of an upload attempt retried with the same key (Metrics.Retry).
const RetryUpload = "upload"

// noMetrics records nothing: the Metrics of a pipeline without one.
type noMetrics struct{}

func (noMetrics) Upload(string)                    {}
func (noMetrics) Retry(string)                     {}
func (noMetrics) TrackerLag(time.Duration)         {}
func (noMetrics) Discovered(string, time.Duration) {}
func (noMetrics) Scanned(string, time.Time)        {}
func (noMetrics) ScanFailed(string)                {}

// metrics returns the pipeline's Metrics, or one that records nothing.
func (p *Pipeline) metrics() Metrics {
	if p.Metrics == nil {
		return noMetrics{}
	}
	return p.Metrics
}

// discovered observes the discovery lag of the jobs a source just yielded (those whose
// recording has a time at the source).
func (p *Pipeline) discovered(source string, jobs []Job) {
	now := p.now()
	for _, j := range jobs {
		if !j.ModTime.IsZero() {
			p.metrics().Discovered(source, max(0, now.Sub(j.ModTime)))
		}
	}
}

// noticed observes the tracker's lag for a transcription found final: from its last change at
// the service to now.
func (p *Pipeline) noticed(t *api.Transcription) {
	if !t.UpdatedAt.IsZero() {
		p.metrics().TrackerLag(max(0, p.now().Sub(t.UpdatedAt)))
	}
}
