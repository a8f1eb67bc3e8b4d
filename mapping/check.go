package mapping

import (
	"fmt"
	"io"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

// sample is the recording templates are tried on at start, so a misspelt field ({{.Nmae}})
// refuses to start rather than skipping every job.
var sample = connectors.Recording{Source: "sample", ItemID: "team/standup.m4a", Version: "v1", Name: "standup.m4a", Size: 1 << 20,
	ModTime: time.Date(2026, 1, 2, 9, 30, 0, 0, time.UTC), Link: "https://example.com/standup",
	Owner: &connectors.Owner{Provider: "sample", ID: "u1", Email: "owner@example.com"}, SourceExternalID: "sample:1",
	Fields: map[string]string{}, Metadata: map[string]string{}}

// checkTemplates runs every template on the sample (a field the source may not give, such as
// .Fields.team, reads as empty here; at use it is an error naming the job).
func (m *Mapper) checkTemplates() error {
	data := templateData{Recording: sample, Type: m.typ, JobID: "00000000-0000-4000-8000-000000000000"}
	if m.externalID != nil {
		t, _ := m.externalID.Clone()
		if err := t.Option("missingkey=zero").Execute(io.Discard, data); err != nil {
			return fmt.Errorf("external_id: %w", err)
		}
	}
	for k, tmpl := range m.metadata {
		t, _ := tmpl.Clone()
		if err := t.Option("missingkey=zero").Execute(io.Discard, data); err != nil {
			return fmt.Errorf("metadata.%s: %w", k, err)
		}
	}
	return nil
}
