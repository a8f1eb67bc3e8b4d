package bridge

import (
	"github.com/transcript-bridge/bridge/api"

	"encoding/json"
	"time"
)

// Event types other systems hear about (see the relay).
const (
	EventUploaded            = "transcription.uploaded"
	EventCompleted           = "transcription.completed"
	EventFailed              = "transcription.failed"
	EventInsufficientBalance = "transcription.insufficient_balance"
	EventReportCompleted     = "report.completed"
	EventReportFailed        = "report.failed"
	EventHeld                = "recording.held"
	EventSkipped             = "recording.skipped"
)

// Event is written to the outbox in the same transaction as the state change it reports. It
// carries ids, never a transcript: consumers fetch what they need (claim check).
type Event struct {
	// ID is the outbox sequence number, set by the store.
	ID int64 `json:"id"`
	// Type is one of the Event* constants.
	Type string `json:"type"`
	// JobID is the job the event is about.
	JobID string `json:"job_id"`
	// TranscriptionID is the service's id, when known.
	TranscriptionID string `json:"transcription_id,omitempty"`
	// Data holds small details: the reason, the report slug, the source item.
	Data json.RawMessage `json:"data,omitempty"`
	// CreatedAt is when the change happened.
	CreatedAt time.Time `json:"created_at"`
	// Endpoint names the webhook endpoint an endpoint.* event is about (its data says so too):
	// the relay sends the event to the other endpoints only. It goes on the bus in the EventRef;
	// the outbox keeps it in Data alone.
	Endpoint string `json:"-"`
}

// NewEvent builds an event of job j with data marshalled from d.
func NewEvent(typ string, j *Job, d map[string]any) Event {
	if d == nil {
		d = map[string]any{}
	}
	for k, v := range d { // reasons and errors quote upstream text: no secret leaves in an event
		if s, ok := v.(string); ok {
			d[k] = api.Redact(s)
		}
	}
	d["source"] = map[string]any{"name": j.Source, "item_id": j.ItemID, "file": j.Name, "link": j.Link}
	b, _ := json.Marshal(d)
	return Event{Type: typ, JobID: j.ID, TranscriptionID: j.TranscriptionID, Data: b}
}

// Topics on the event bus (Watermill).
const (
	// EventsTopic carries an EventRef for every event, published on the state change's
	// transaction.
	EventsTopic = "events"
	// EventsPoisonTopic keeps messages that cannot be handled (malformed, or a handler panic),
	// with the reason in their metadata.
	EventsPoisonTopic = "events.poison"
)

// EventRef is the bus message for an event: ids only (claim check); the event row holds the
// rest.
type EventRef struct {
	// EventID is the event's outbox sequence number.
	EventID int64 `json:"event_id"`
	// Type is the event type.
	Type string `json:"type"`
	// JobID is the job the event is about; it is also the message's correlation id.
	JobID string `json:"job_id"`
	// TranscriptionID is the service's id, when known.
	TranscriptionID string `json:"transcription_id,omitempty"`
	// Endpoint is the endpoint an endpoint.* event is about (Event.Endpoint), which is not sent
	// its own event.
	Endpoint string `json:"endpoint,omitempty"`
}

// Export events (no job: JobID is empty).
const (
	EventExportCompleted = "export.completed"
	EventExportFailed    = "export.failed"
)
