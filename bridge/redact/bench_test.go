package redact_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge/redact"
)

// benchTranscription returns a transcription of about size bytes of text, as the sandbox
// writes them: utterances, every other one ending with an e-mail address, a phone number, a
// card number, an IBAN or an IP address beside ordinary numbers.
func benchTranscription(size int) *api.Transcription {
	pii := []string{" You can reach me at olivia.%d@example.com, order number 1234567.",
		" My number is +1 201-555-01%02d, and we are 12 people.", " The card is 4111 1111 1111 1111, expiring 20%02d.",
		" Pay to DE89 3704 0044 0532 0130 00 by Friday %d.", " The server at 192.0.2.%d went down at 10:30."}
	var segs []api.Segment
	var text strings.Builder
	for i := 0; text.Len() < size; i++ {
		s := fmt.Sprintf("Let me share the numbers. Sales grew twelve percent this quarter, %d deals closed.", i%90)
		if i%2 == 1 {
			s += fmt.Sprintf(pii[(i/2)%len(pii)], i%100)
		}
		segs = append(segs, api.Segment{ID: i + 1, Text: s})
		fmt.Fprintf(&text, "[%02d:%02d] Speaker 1: %s\n", i/60, i%60, s)
	}
	t, sum, rep := text.String(), "Olivia and Sam discussed pricing.", "Questions go to sam.1@example.com."
	title := "Pricing and budget"
	return &api.Transcription{ID: "t1", Title: &title, Summary: &sum, Text: &t, Segments: segs,
		PromptResults: []api.Report{{ID: "r1", Text: &rep}}}
}

// BenchmarkRedact measures redacting a transcription (every kind, a US default region) and
// encoding it, beside the bare references of the same payload: a copy of its encoded bytes and
// its encoding alone. Bytes are the encoded payload's (about 1 MB), so MB/s compare.
func BenchmarkRedact(b *testing.B) {
	size := 500 << 10 // text and segments: about 1.3 MB encoded
	if testing.Short() {
		size = 20 << 10 // CI's smoke run (-short -benchtime 1x)
	}
	tr := benchTranscription(size)
	enc, _ := json.Marshal(tr)
	s, err := redact.New(redact.Config{Kinds: redact.Kinds, DefaultRegion: "US"})
	if err != nil {
		b.Fatal(err)
	}
	emailOnly, _ := redact.New(redact.Config{Kinds: []string{redact.Email}})
	b.Run("copy", func(b *testing.B) {
		b.SetBytes(int64(len(enc)))
		dst := make([]byte, len(enc))
		for b.Loop() {
			copy(dst, enc)
		}
	})
	b.Run("marshal", func(b *testing.B) {
		b.SetBytes(int64(len(enc)))
		for b.Loop() {
			if _, err := json.Marshal(tr); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, c := range []struct {
		name string
		set  *redact.Set
	}{{"redact-email+marshal", emailOnly}, {"redact-all+marshal", s}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(enc)))
			for b.Loop() {
				out, _ := redact.Transcription(c.set, tr)
				if _, err := json.Marshal(out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
