package redact_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge/redact"
)

func must(t *testing.T, c redact.Config) *redact.Set {
	t.Helper()
	s, err := redact.New(c)
	if err != nil {
		t.Fatalf("New(%+v) = %v", c, err)
	}
	return s
}

func TestRedact(t *testing.T) {
	all := must(t, redact.Config{Kinds: redact.Kinds, DefaultRegion: "US",
		Patterns: map[string]string{"badge": `\bEMP-[0-9]{5}\b`}})
	noRegion := must(t, redact.Config{Kinds: []string{redact.Phone}})
	gb := must(t, redact.Config{Kinds: []string{redact.Phone}, DefaultRegion: "gb"})
	tests := []struct {
		name string
		set  *redact.Set
		in   string
		want string
	}{
		// e-mail
		{"email", all, "write to jane.doe+crm@example.co.uk.", "write to [email]."},
		{"email twice", all, "a@b.io, Bob.Smith@mail.example.com", "[email], [email]"},
		{"email near-miss: no domain", all, "ping @jane or jane@localhost", "ping @jane or jane@localhost"},
		// cards: Luhn
		{"card visa spaced", all, "card 4111 1111 1111 1111 exp", "card [card] exp"},
		{"card mastercard hyphens", all, "5500-0000-0000-0004", "[card]"},
		{"card amex", all, "378282246310005", "[card]"},
		{"card near-miss: Luhn fails", all, "4111 1111 1111 1112", "4111 1111 1111 1112"},
		{"card near-miss: not a network's first digit", all, "ref 1234 5678 9012 3452", "ref 1234 5678 9012 3452"},
		{"card then a year", all, "4111 1111 1111 1111 2027", "[card] 2027"},
		// IBAN: mod 97
		{"iban de grouped", all, "pay to DE89 3704 0044 0532 0130 00 today", "pay to [iban] today"},
		{"iban gb compact", all, "GB82WEST12345698765432", "[iban]"},
		{"iban near-miss: check digits", all, "DE88 3704 0044 0532 0130 00", "DE88 3704 0044 0532 0130 00"},
		// IP addresses
		{"ipv4", all, "from 192.168.1.20 and 8.8.8.8", "from [ip] and [ip]"},
		{"ipv6", all, "host 2001:db8::1 or fe80::1%", "host [ip] or [ip]%"},
		{"ipv4-mapped ipv6", all, "seen as ::ffff:192.0.2.1", "seen as [ip]"},
		{"ip near-miss: octet above 255", all, "version 256.1.1.1", "version 256.1.1.1"},
		{"ip near-miss: times and versions", all, "[01:02] at 10:30:45 ran v1.2.3 ::", "[01:02] at 10:30:45 ran v1.2.3 ::"},
		// phone numbers
		{"phone us national", all, "call (201) 555-0123 now", "call [phone] now"},
		{"phone international", all, "or +44 20 7946 0958.", "or [phone]."},
		{"phone near-miss: ordinary numbers", all, "in 1990-2020 we sold 12000 units, order 1234567, pi 3.14159265",
			"in 1990-2020 we sold 12000 units, order 1234567, pi 3.14159265"},
		{"phone without region: national kept", noRegion, "call 201-555-0123 or +1 201 555 0123", "call 201-555-0123 or [phone]"},
		{"phone gb national", gb, "ring 020 7946 0958", "ring [phone]"},
		// named patterns
		{"pattern", all, "badge EMP-12345, not EMP-1234", "badge [badge], not EMP-1234"},
		// nothing configured
		{"empty set", must(t, redact.Config{}), "jane@example.com", "jane@example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counts := redact.Counts{}
			if got := tt.set.Redact(tt.in, counts); got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
			n := 0
			for _, c := range counts {
				n += c
			}
			if want := strings.Count(tt.want, "[") - strings.Count(tt.in, "["); n != want {
				t.Errorf("Redact(%q) counted %v, want %d in all", tt.in, counts, want)
			}
		})
	}
}

func TestNewRefuses(t *testing.T) {
	tests := []struct {
		c    redact.Config
		want string
	}{
		{redact.Config{Kinds: []string{"ssn"}}, `redact: unknown kind "ssn"`},
		{redact.Config{Patterns: map[string]string{"badge": `EMP-(`}}, "redact_patterns.badge: "},
		{redact.Config{Patterns: map[string]string{"any": `x*`}}, "redact_patterns.any: "},
		{redact.Config{Patterns: map[string]string{"a]": `x`}}, "redact_patterns: name "},
		{redact.Config{Kinds: []string{"phone"}, DefaultRegion: "XX"}, `default_region: "XX"`},
	}
	for _, tt := range tests {
		_, err := redact.New(tt.c)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v, want an error starting %q", tt.c, err, tt.want)
		}
	}
}

func TestTranscription(t *testing.T) {
	s := must(t, redact.Config{Kinds: []string{redact.Email, redact.Card}})
	str := func(v string) *string { return &v }
	in := &api.Transcription{ID: "t1", Title: str("Call with jo@example.com"), Summary: str("plain"),
		Text:          str("jo@example.com paid with 4111111111111111"),
		Segments:      []api.Segment{{ID: 1, Text: "mail jo@example.com"}, {ID: 2, Text: "nothing"}},
		PromptResults: []api.Report{{ID: "r1", Text: str("card 4111 1111 1111 1111")}, {ID: "r2"}}}
	out, counts := redact.Transcription(s, in)
	if want := (redact.Counts{"email": 3, "card": 2}); !maps.Equal(counts, want) {
		t.Errorf("Transcription counts = %v, want %v", counts, want)
	}
	for _, c := range []struct{ got, want string }{
		{*out.Title, "Call with [email]"}, {*out.Text, "[email] paid with [card]"}, {out.Segments[0].Text, "mail [email]"},
		{*out.PromptResults[0].Text, "card [card]"}, {*in.Text, "jo@example.com paid with 4111111111111111"},
		{in.Segments[0].Text, "mail jo@example.com"},
	} {
		if c.got != c.want {
			t.Errorf("Transcription: %q, want %q", c.got, c.want)
		}
	}
	if out.PromptResults[1].Text != nil {
		t.Errorf("Transcription: a report without text got %q", *out.PromptResults[1].Text)
	}
}
