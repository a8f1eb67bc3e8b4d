package export

import (
	"time"

	"github.com/transcript-bridge/bridge/bridge/redact"
)

// ManifestName is the file each run writes last.
const ManifestName = "manifest.json"

// Manifest describes one run: its window, counts, archives and every transcript in it.
type Manifest struct {
	Export      string       `json:"export"`
	Tick        time.Time    `json:"tick"`
	Window      Window       `json:"window"`
	Format      string       `json:"format"`
	Layout      string       `json:"layout"`
	Destination string       `json:"destination"`
	Counts      Counts       `json:"counts"`
	Archives    []Archive    `json:"archives,omitempty"`
	Transcripts []Transcript `json:"transcripts"`
	Skipped     []Skipped    `json:"skipped"`
	WrittenAt   time.Time    `json:"written_at"`
}

// Window is [From, Until) on creation time.
type Window struct {
	From  time.Time `json:"from"`
	Until time.Time `json:"until"`
}

// Counts sum a run up.
type Counts struct {
	Listed   int `json:"listed"`
	Exported int `json:"exported"`
	Skipped  int `json:"skipped"`
}

// Archive is one ZIP of the run.
type Archive struct {
	File   string `json:"file"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	Count  int    `json:"count"`
}

// Transcript is one exported transcript; Archive is empty with layout files.
type Transcript struct {
	ID         string `json:"id"`
	Title      string `json:"title"`
	ExternalID string `json:"external_id,omitempty"`
	File       string `json:"file"`
	Archive    string `json:"archive,omitempty"`
	Size       int64  `json:"size"`
	SHA256     string `json:"sha256"`
	// Redactions counts what the export's redact settings replaced in the file, by kind (absent
	// when nothing was).
	Redactions redact.Counts `json:"redactions,omitempty"`
}

// Skipped is a listed transcript the run could not export (deleted in between).
type Skipped struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Reason string `json:"reason"`
}
