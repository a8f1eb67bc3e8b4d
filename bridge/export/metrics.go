package export

// Metrics hears what the exporter does, for the bridge's /metrics (cmd wires a Prometheus
// implementation; this package imports none). A nil Metrics records nothing. The time of each
// export's last successful run is read from the store at scrape time, not here.
type Metrics interface {
	// ExportRun counts one run of export this process finished: outcome is "completed" or
	// "failed" (bridge.ExportCompleted, bridge.ExportFailed).
	ExportRun(export, outcome string)
}

// observe counts the run of export that ended with status.
func (e *Exporter) observe(export, status string) {
	if e.Metrics != nil {
		e.Metrics.ExportRun(export, status)
	}
}
