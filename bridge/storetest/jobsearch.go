package storetest

import (
	"slices"
	"testing"

	"github.com/transcript-bridge/bridge/bridge"
)

// jobQueryCases: JobFilter.Query finds jobs by file name, item, external id, author, owner,
// job id (whole or its tail) and transcription id, any case, taking LIKE's wildcards literally.
var jobQueryCases = []testCase{
	{"finds by every name and id", func(t *testing.T, d *db) {
		q, other := rec("q1", "1"), rec("o1", "1")
		q.Name, q.Owner = "Quarterly review.mp4", &owner{Provider: "zoom", ID: "u-quinn", Email: "quinn@acme.test", Name: "Quinn Ng"}
		other.Name = "standup_100%.wav"
		jobs := d.add(t, "inbox", t0, q, other)
		j := jobs[0]
		j.ExternalID, j.Author, j.TranscriptionID = "EXT-4711", "email:quinn@acme.test", "tr-9c1f"
		d.move(t, &j, bridge.StateQueued, t0)
		for _, c := range []struct {
			query string
			want  []string // item ids
		}{
			{"Quarterly", []string{"q1"}},
			{"quarterly REVIEW", []string{"q1"}},
			{"ext-4711", []string{"q1"}},
			{"quinn@acme", []string{"q1"}},
			{"Quinn Ng", []string{"q1"}},
			{"u-quinn", []string{"q1"}},
			{j.ID, []string{"q1"}},
			{j.ID[len(j.ID)-12:], []string{"q1"}},
			{jobs[1].ID, []string{"o1"}},
			{"tr-9c1f", []string{"q1"}},
			{"o1", []string{"o1"}},
			{"100%", []string{"o1"}},
			{"_", []string{"o1"}},
			{"%", []string{"o1"}},
			{"nothing like it", nil},
		} {
			got, err := d.Jobs(ctx, bridge.JobFilter{Query: c.query})
			var items []string
			for _, g := range got {
				items = append(items, g.ItemID)
			}
			if err != nil || !slices.Equal(items, c.want) {
				t.Errorf("Jobs(Query %q) = %v, %v; want %v", c.query, items, err, c.want)
			}
		}
	}},
	{"with the other filters", func(t *testing.T, d *db) {
		a, b := rec("a", "1"), rec("b", "1")
		a.Name, b.Name = "Quarterly a.wav", "Quarterly b.wav"
		d.add(t, "inbox", t0, a)
		d.add(t, "zoom", t0, b)
		got, err := d.Jobs(ctx, bridge.JobFilter{Query: "quarterly", Source: "zoom"})
		if err != nil || len(got) != 1 || got[0].ItemID != "b" {
			t.Errorf("Jobs(Query quarterly, Source zoom) = %s, %v; want b", ids(got), err)
		}
	}},
}
