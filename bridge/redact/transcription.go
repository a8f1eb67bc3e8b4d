package redact

import "github.com/transcript-bridge/bridge/api"

// Transcription returns a copy of t with r applied to its title, summary, text, segments' texts
// and reports' texts, and what was replaced. t is left as it is (the relay shares fetched records
// between endpoints); a nil t gives nil.
func Transcription(r Redactor, t *api.Transcription) (*api.Transcription, Counts) {
	counts := Counts{}
	if t == nil {
		return nil, counts
	}
	c := *t
	c.Title = redactPtr(r, t.Title, counts)
	c.Summary = redactPtr(r, t.Summary, counts)
	c.Text = redactPtr(r, t.Text, counts)
	if t.Segments != nil {
		c.Segments = make([]api.Segment, len(t.Segments))
		for i, s := range t.Segments {
			s.Text = r.Redact(s.Text, counts)
			c.Segments[i] = s
		}
	}
	if t.PromptResults != nil {
		c.PromptResults = make([]api.Report, len(t.PromptResults))
		for i, rep := range t.PromptResults {
			rep.Text = redactPtr(r, rep.Text, counts)
			c.PromptResults[i] = rep
		}
	}
	return &c, counts
}

func redactPtr(r Redactor, s *string, counts Counts) *string {
	if s == nil {
		return nil
	}
	out := r.Redact(*s, counts)
	return &out
}
