package sandbox

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// errNoFilename is why an upload's Content-Disposition is refused: no file name could be found.
var errNoFilename = errors.New("no file name found; send Content-Disposition: attachment; filename=<name>")

// dispositionFilename returns the file name of an upload's Content-Disposition header, read as
// leniently as clients write it: the disposition type may be missing or anything (attachment,
// inline, form-data); parameter names are case-insensitive; values may be quoted (with
// backslash escapes, or Windows paths left unescaped), unquoted with spaces, or unterminated; a
// trailing ';' is fine. The RFC 5987/6266 filename* (UTF-8 or ISO-8859-1, percent-encoded) and
// RFC 2231 continuations (filename*0, filename*1*, ...) are preferred over filename. Raw
// non-ASCII bytes are UTF-8 when valid, else ISO-8859-1. Of a path only the last element is
// kept; control characters become spaces; surrounding spaces are trimmed. It returns an error
// wrapping errNoFilename only when no non-empty name is left.
func dispositionFilename(h string) (string, error) {
	var plain, ext *string
	parts := map[int]dispParam{}
	for _, p := range scanDisposition(h) {
		switch {
		case p.name == "filename":
			if plain == nil {
				plain = &p.value
			}
		case p.name == "filename*":
			if ext == nil {
				ext = &p.value
			}
		case strings.HasPrefix(p.name, "filename*"):
			idx := strings.TrimSuffix(p.name[len("filename*"):], "*")
			n, err := strconv.Atoi(idx)
			if _, seen := parts[n]; err == nil && n >= 0 && n < 1000 && !seen && idx == strconv.Itoa(n) {
				parts[n] = p
			}
		}
	}
	// Candidates best first; a lossy one (bytes that did not fit its charset) is used only when
	// no exact one gives a name.
	type candidate struct {
		name  string
		exact bool
	}
	var cands []candidate
	if ext != nil {
		name, exact := decodeExtValue(*ext)
		cands = append(cands, candidate{name, exact})
	}
	if len(parts) > 0 {
		name, exact := joinContinuations(parts)
		cands = append(cands, candidate{name, exact})
	}
	if plain != nil {
		cands = append(cands, candidate{decodeRaw(*plain), true})
	}
	for _, exact := range []bool{true, false} {
		for _, c := range cands {
			if c.exact == exact {
				if name := cleanFilename(c.name); name != "" {
					return name, nil
				}
			}
		}
	}
	return "", fmt.Errorf("parse Content-Disposition %q: %w", h, errNoFilename)
}

// dispParam is one name=value parameter; name is in lower case, value unquoted.
type dispParam struct {
	name, value string
	extended    bool // a continuation part written name*N*=, percent-encoded
}

// scanDisposition splits h into its name=value parameters. Words without '=' (the disposition
// type, junk) are skipped; "attachment filename=x" (a missing ';') yields filename.
func scanDisposition(h string) []dispParam {
	var out []dispParam
	for i := 0; i < len(h); {
		j := i
		for j < len(h) && h[j] != '=' && h[j] != ';' {
			j++
		}
		if j == len(h) || h[j] == ';' {
			i = j + 1
			continue
		}
		name := strings.ToLower(strings.TrimSpace(h[i:j]))
		if k := strings.LastIndexAny(name, " \t"); k >= 0 {
			name = name[k+1:]
		}
		i = j + 1
		for i < len(h) && (h[i] == ' ' || h[i] == '\t') {
			i++
		}
		var value string
		if i < len(h) && h[i] == '"' {
			var b strings.Builder
			for i++; i < len(h) && h[i] != '"'; i++ {
				// Only \" and \\ are escapes, so C:\Users\me stays a path.
				if h[i] == '\\' && i+1 < len(h) && (h[i+1] == '"' || h[i+1] == '\\') {
					i++
				}
				b.WriteByte(h[i])
			}
			value = b.String()
			for i < len(h) && h[i] != ';' { // the closing quote and anything after it
				i++
			}
		} else {
			k := strings.IndexByte(h[i:], ';')
			if k < 0 {
				k = len(h) - i
			}
			value = strings.TrimSpace(h[i : i+k])
			i += k
		}
		i++ // the ';'
		if name != "" {
			out = append(out, dispParam{name: name, value: value, extended: strings.HasSuffix(name, "*")})
		}
	}
	return out
}

// decodeExtValue decodes an RFC 5987 ext-value charset'language'percent-encoded. A value
// without the two quotes is read as percent-encoded UTF-8. exact is false when the bytes do not
// fit the charset or the charset is unknown.
func decodeExtValue(v string) (name string, exact bool) {
	charset, enc := splitCharset(v)
	return decodeCharset(charset, percentDecode(enc))
}

// splitCharset splits an ext-value into its lower-case charset and its encoded text.
func splitCharset(v string) (charset, enc string) {
	charset, rest, ok := strings.Cut(v, "'")
	if !ok {
		return "", v
	}
	if _, after, ok := strings.Cut(rest, "'"); ok {
		rest = after
	}
	return strings.ToLower(strings.TrimSpace(charset)), rest
}

// joinContinuations joins RFC 2231 parts 0, 1, ... (up to the first gap) and decodes them with
// the charset of part 0.
func joinContinuations(parts map[int]dispParam) (name string, exact bool) {
	charset := ""
	var b []byte
	for n := 0; ; n++ {
		p, ok := parts[n]
		if !ok {
			break
		}
		v := p.value
		if p.extended {
			if n == 0 {
				charset, v = splitCharset(v)
			}
			b = append(b, percentDecode(v)...)
		} else {
			b = append(b, v...)
		}
	}
	return decodeCharset(charset, b)
}

// decodeCharset turns b in charset into a string. UTF-8 (also an empty charset) is exact when
// valid; ISO-8859-1 and US-ASCII are read as ISO-8859-1; any other charset is lossy.
func decodeCharset(charset string, b []byte) (string, bool) {
	switch charset {
	case "", "utf-8", "utf8":
		return string(b), utf8.Valid(b)
	case "iso-8859-1", "iso_8859-1", "latin1", "latin-1", "us-ascii", "ascii":
		return latin1(b), true
	}
	return decodeRaw(string(b)), false
}

// decodeRaw reads raw header bytes: UTF-8 when valid, else ISO-8859-1 (HTTP's historic charset).
func decodeRaw(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return latin1([]byte(s))
}

func latin1(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

// percentDecode decodes %XX escapes; a '%' not followed by two hex digits stays as it is.
func percentDecode(s string) []byte {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			n, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b = append(b, byte(n))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return b
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// cleanFilename makes a decoded name safe as a title: valid UTF-8, control characters as
// spaces, only the last element of a path, no surrounding spaces.
func cleanFilename(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	s = s[strings.LastIndexAny(s, `/\`)+1:]
	return strings.TrimSpace(s)
}
