package sandbox

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestDispositionFilename(t *testing.T) {
	tests := []struct {
		header string
		want   string // "" means an error (400 filename_required)
	}{
		// What clients really send.
		{`attachment; filename=Quarterly review.wav`, "Quarterly review.wav"},
		{`attachment; filename="Quarterly review.wav"`, "Quarterly review.wav"},
		{`attachment; filename=a.wav;`, "a.wav"},
		{`attachment; filename="a.wav";`, "a.wav"},
		{`attachment;filename=a.wav`, "a.wav"},
		{`attachment; filename = "a.wav" `, "a.wav"},
		{`attachment filename=a.wav`, "a.wav"},
		{`filename=x.wav`, "x.wav"},
		{`filename="x.wav"`, "x.wav"},
		{`inline; filename=x.wav`, "x.wav"},
		{`form-data; name="file"; filename="x.wav"`, "x.wav"},
		{`Attachment; FileName="x.wav"`, "x.wav"},
		{`ATTACHMENT; FILENAME=x.wav`, "x.wav"},
		{`attachment; size=1234; filename=x.wav; creation-date="Wed, 12 Feb 1997 16:29:51 -0500"`, "x.wav"},
		{`attachment; filename=a.wav; filename=b.wav`, "a.wav"},
		// Quoted strings and their escapes.
		{`attachment; filename="say \"hi\".wav"`, `say "hi".wav`},
		{`attachment; filename="a;b.wav"`, "a;b.wav"},
		{`attachment; filename="unterminated.wav`, "unterminated.wav"},
		{`attachment; filename="a.wav"junk; size=1`, "a.wav"},
		{`attachment; filename="\\\\server\\share\\rec.wav"`, "rec.wav"},
		{`attachment; filename="C:\Users\me\rec.wav"`, "rec.wav"},
		// RFC 5987 / 6266 extended values, preferred over filename wherever they stand.
		{`attachment; filename*=UTF-8''R%C3%A9union%20%C3%A9quipe.wav`, "Réunion équipe.wav"},
		{`attachment; filename*=utf-8'fr'R%C3%A9union.wav`, "Réunion.wav"},
		{`attachment; filename*=ISO-8859-1''R%E9union.wav`, "Réunion.wav"},
		{`attachment; filename*=iso-8859-1'de'%DCbersicht.wav`, "Übersicht.wav"},
		{`attachment; filename="euro.wav"; filename*=UTF-8''%E2%82%AC%20rates.wav`, "€ rates.wav"},
		{`attachment; filename*=UTF-8''%E2%82%AC.wav; filename="euro.wav"`, "€.wav"},
		{`attachment; FILENAME*=utf-8''x.wav`, "x.wav"},
		{`attachment; filename*="UTF-8''quoted%20ext.wav"`, "quoted ext.wav"},
		{`attachment; filename*=UTF-8''100%25%zz.wav`, "100%%zz.wav"},
		{`attachment; filename*=''no%20charset.wav`, "no charset.wav"},
		{`attachment; filename*=UTF-8''%FF%FE.wav; filename=fallback.wav`, "fallback.wav"},
		{`attachment; filename*=KOI8-R''%E1.wav; filename=fallback.wav`, "fallback.wav"},
		{`attachment; filename*=UTF-8''%FF.wav`, "\uFFFD.wav"},
		{`attachment; filename*=UTF-8''; filename=fallback.wav`, "fallback.wav"},
		// RFC 2231 continuations.
		{`attachment; filename*0="Quarterly "; filename*1="review.wav"`, "Quarterly review.wav"},
		{`attachment; filename*0*=UTF-8''R%C3%A9; filename*1*=union; filename*2=.wav`, "Réunion.wav"},
		{`attachment; filename*1="b.wav"; filename*0="a"`, "ab.wav"},
		// Raw non-ASCII bytes: UTF-8 when valid, else ISO-8859-1.
		{"attachment; filename=\"R\u00e9union.wav\"", "Réunion.wav"},
		{"attachment; filename=\"R\xe9union.wav\"", "Réunion.wav"},
		// Paths and control characters never reach the title.
		{`attachment; filename=../../etc/passwd.wav`, "passwd.wav"},
		{`attachment; filename*=UTF-8''..%2F..%2Fx.wav`, "x.wav"},
		{"attachment; filename=\"tab\there.wav\"", "tab here.wav"},
		{`attachment; filename*=UTF-8''a%0D%0Ab%00.wav`, "a  b .wav"},
		{`attachment; filename*=UTF-8''%C2%85x.wav`, "x.wav"},
		{`attachment; filename=%41.wav`, "%41.wav"},
		// No name at all.
		{``, ""},
		{`   `, ""},
		{`attachment`, ""},
		{`attachment;`, ""},
		{`attachment; filename=`, ""},
		{`attachment; filename=""`, ""},
		{`attachment; filename="   "`, ""},
		{`attachment; filename="/"`, ""},
		{`attachment; filename=dir/`, ""},
		{`attachment; filename*=UTF-8''`, ""},
		{`attachment; name=x.wav`, ""},
		{`attachment; filenames=x.wav`, ""},
		{`;;;`, ""},
		{`=x.wav`, ""},
	}
	for _, tc := range tests {
		got, err := dispositionFilename(tc.header)
		if tc.want == "" {
			if err == nil {
				t.Errorf("dispositionFilename(%q) = %q, want an error", tc.header, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("dispositionFilename(%q) = %q, %v, want %q", tc.header, got, err, tc.want)
		}
	}
}

func TestUploadDispositionForms(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		header, title string
		status        int
		code          string
	}{
		{`attachment; filename=Quarterly review.wav`, "Quarterly review.wav", 201, ""},
		{`inline; FILENAME=x.wav;`, "x.wav", 201, ""},
		{`filename*=ISO-8859-1''R%E9union.wav`, "Réunion.wav", 201, ""},
		{`attachment; filename=notes.txt`, "", 400, "unsupported_file_format"},
		{`attachment; filename=""`, "", 400, "filename_required"},
	}
	for i, tc := range tests {
		r := h.upload(ownerKey, "", "", wav(2, 0, uint64(i)), map[string]string{"Content-Disposition": tc.header})
		if r.status != tc.status || r.code() != tc.code {
			t.Errorf("upload with Content-Disposition %q = %d %q, want %d %q (%s)", tc.header, r.status, r.code(), tc.status, tc.code, r.body)
			continue
		}
		if tc.status != 201 {
			continue
		}
		var u uploadResponse
		r.json(t, &u)
		if got := h.record(ownerKey, u.UUID)["title"]; got != tc.title {
			t.Errorf("title of an upload with Content-Disposition %q = %q, want %q", tc.header, got, tc.title)
		}
	}
}

func FuzzContentDisposition(f *testing.F) {
	for _, s := range []string{
		`attachment; filename=Quarterly review.wav`,
		`attachment; filename="say \"hi\".wav"`,
		`attachment; filename*=UTF-8''R%C3%A9union.wav; filename="fallback.wav"`,
		`attachment; filename*=ISO-8859-1''R%E9union.wav`,
		`inline; FileName=a.wav;`,
		`attachment; filename*0*=UTF-8''R%C3%A9; filename*1=union.wav`,
		"attachment; filename=\"R\xe9union.wav\"",
		`attachment; filename="C:\Users\me\rec.wav"`,
		`attachment; filename="unterminated`,
		`attachment`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		name, err := dispositionFilename(h)
		if err != nil {
			if name != "" {
				t.Errorf("dispositionFilename(%q) = %q with error %v, want no name with an error", h, name, err)
			}
			return
		}
		if name == "" || !utf8.ValidString(name) || strings.ContainsAny(name, `/\`) ||
			strings.IndexFunc(name, unicode.IsControl) >= 0 || strings.TrimSpace(name) != name {
			t.Errorf("dispositionFilename(%q) = %q, want a trimmed non-empty UTF-8 name without path separators or control characters", h, name)
		}
	})
}
