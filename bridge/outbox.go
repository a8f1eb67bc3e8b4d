package bridge

import "context"

// DrainOutbox hands pending outbox events on. Until the relay delivers them as webhooks, they
// are logged and marked.
func (p *Pipeline) DrainOutbox(ctx context.Context) error {
	for {
		events, err := p.Store.PendingEvents(ctx, 200)
		if err != nil || len(events) == 0 {
			return err
		}
		ids := make([]int64, len(events))
		for i, e := range events {
			ids[i] = e.ID
			p.log().Info("event", "type", e.Type, "job", e.JobID, "transcription", e.TranscriptionID, "data", string(e.Data))
		}
		if err := p.Store.MarkEvents(ctx, ids); err != nil {
			return err
		}
	}
}
