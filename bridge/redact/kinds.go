package redact

import (
	"net/netip"
	"regexp"
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// Candidate expressions of the built-in kinds, anchored where their rule's next finds a start;
// each candidate is then checked (except e-mails).
var (
	emailRe = regexp.MustCompile(`^[A-Za-z0-9._%+\-]+@[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}\b`)
	// ibanRe: a country code, two check digits and 11 to 30 letters or digits, in groups.
	ibanRe = regexp.MustCompile(`^[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]){11,30}\b`)
	// cardRe: 13 to 19 digits, grouped by spaces or hyphens.
	cardRe = regexp.MustCompile(`^[0-9](?:[ \-]?[0-9]){12,18}\b`)
	// ip6Re: an IPv6 address (with an IPv4 tail, as ::ffff:192.0.2.1); ip4Re an IPv4 one.
	ip6Re = regexp.MustCompile(`^(?i)(?:[0-9a-f]{1,4}|:)(?::[0-9a-f]{0,4}){1,7}(?:\.[0-9]{1,3}){0,3}`)
	ip4Re = regexp.MustCompile(`^(?:[0-9]{1,3}\.){3}[0-9]{1,3}\b`)
	// phoneRe: 7 to 17 digits, maybe after + or (, grouped by spaces, dots, hyphens, slashes
	// or parentheses.
	phoneRe = regexp.MustCompile(`^[+(]?[0-9](?:[ .\-/()]{0,2}[0-9]){6,16}\b`)
)

// builtin returns the rules of kind k; region is the phone numbers' default region.
func builtin(k, region string) []rule {
	switch k {
	case Email:
		return []rule{{kind: Email, re: emailRe, next: nextEmail}}
	case IBAN:
		return []rule{{kind: IBAN, re: ibanRe, check: shrinking(IBAN, validIBAN), next: nextIBAN}}
	case Card:
		return []rule{{kind: Card, re: cardRe, check: shrinking(Card, validCard), next: nextNumber}}
	case IP:
		check := func(m string) (string, bool) {
			if validIP(m) {
				return "[" + IP + "]", true
			}
			return m, false
		}
		return []rule{{kind: IP, re: ip6Re, check: check, next: nextIP6}, {kind: IP, re: ip4Re, check: check, next: nextNumber}}
	default: // Phone
		return []rule{{kind: Phone, re: phoneRe, check: shrinking(Phone, func(s string) bool { return validPhone(s, region) }), next: nextPhone}}
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isHex(c byte) bool   { return isDigit(c) || (c|0x20) >= 'a' && (c|0x20) <= 'f' }

// isWord is regexp's \w: what a word boundary (\b) separates from the rest.
func isWord(c byte) bool { return isDigit(c) || isUpper(c) || (c >= 'a' && c <= 'z') || c == '_' }

// startsWord reports whether text[i] starts a word (\b before it).
func startsWord(text string, i int) bool { return i == 0 || !isWord(text[i-1]) }

// nextNumber finds a digit starting a word.
func nextNumber(text string, from int) int {
	for i := from; i < len(text); i++ {
		if isDigit(text[i]) && startsWord(text, i) {
			return i
		}
	}
	return -1
}

// nextPhone finds a digit starting a word, or a + or ( before a digit.
func nextPhone(text string, from int) int {
	for i := from; i < len(text); i++ {
		c := text[i]
		if (isDigit(c) && startsWord(text, i)) || ((c == '+' || c == '(') && i+1 < len(text) && isDigit(text[i+1])) {
			return i
		}
	}
	return -1
}

// nextIBAN finds two capital letters and two digits starting a word.
func nextIBAN(text string, from int) int {
	for i := from; i+3 < len(text); i++ {
		if isUpper(text[i]) && isUpper(text[i+1]) && isDigit(text[i+2]) && isDigit(text[i+3]) && startsWord(text, i) {
			return i
		}
	}
	return -1
}

// nextEmail finds the start of the local part before an @ (never before from).
func nextEmail(text string, from int) int {
	for from < len(text) {
		at := strings.IndexByte(text[from:], '@')
		if at < 0 {
			return -1
		}
		at += from
		i := at
		for i > from && isLocal(text[i-1]) {
			i--
		}
		if i < at {
			return i
		}
		from = at + 1
	}
	return -1
}

func isLocal(c byte) bool { return isWord(c) || strings.IndexByte(".%+-", c) >= 0 }

// nextIP6 finds the start of what may be an IPv6 address: up to four hex digits before a
// colon, or a double colon.
func nextIP6(text string, from int) int {
	for from < len(text) {
		c := strings.IndexByte(text[from:], ':')
		if c < 0 {
			return -1
		}
		c += from
		i := c
		for i > from && c-i < 4 && isHex(text[i-1]) {
			i--
		}
		if i < c || (c+1 < len(text) && text[c+1] == ':') {
			return i
		}
		from = c + 1
	}
	return -1
}

// shrinking returns a check that replaces the longest valid start of a candidate: the
// candidate, else the candidate without its last group, and so on (a greedy candidate may
// have taken an ordinary number after the real one).
func shrinking(kind string, valid func(string) bool) func(string) (string, bool) {
	return func(m string) (string, bool) {
		for cut := m; cut != ""; {
			if valid(cut) {
				return "[" + kind + "]" + m[len(cut):], true
			}
			i := strings.LastIndexAny(cut, " .-/()")
			if i < 0 {
				break
			}
			cut = strings.TrimRight(cut[:i], " .-/(")
		}
		return m, false
	}
}

// digitsOf returns the digits of s, dropping everything else.
func digitsOf(s string) []byte {
	d := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			d = append(d, s[i])
		}
	}
	return d
}

// validCard reports whether s holds 13 to 19 digits that start as a card network's do (2 to 6)
// and pass the Luhn check.
func validCard(s string) bool {
	d := digitsOf(s)
	if len(d) < 13 || len(d) > 19 || d[0] < '2' || d[0] > '6' {
		return false
	}
	sum := 0
	for i := range d {
		n := int(d[len(d)-1-i] - '0')
		if i%2 == 1 {
			if n *= 2; n > 9 {
				n -= 9
			}
		}
		sum += n
	}
	return sum%10 == 0
}

// validIBAN reports whether s (spaces allowed) is 15 to 34 letters and digits whose ISO 13616
// check digits pass: the first four moved to the end, letters as 10 to 35, the number mod 97
// is 1.
func validIBAN(s string) bool {
	s = strings.ReplaceAll(s, " ", "")
	if len(s) < 15 || len(s) > 34 {
		return false
	}
	rem := 0
	for _, c := range s[4:] + s[:4] {
		switch {
		case c >= '0' && c <= '9':
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			rem = (rem*100 + int(c-'A'+10)) % 97
		default:
			return false
		}
	}
	return rem == 1
}

// validIP reports whether s parses as an IP address (net/netip: no leading zeros, no octet
// above 255), leaving out the unspecified IPv6 address "::" and similar runs of colons.
func validIP(s string) bool {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return false
	}
	return a.Is4() || strings.Trim(s, ":0") != ""
}

// validPhone reports whether s is a valid phone number (libphonenumber's metadata) written
// internationally (+) or, with a region, nationally for that region.
func validPhone(s, region string) bool {
	n := len(digitsOf(s))
	if n < 7 || n > 15 || (region == "" && !strings.HasPrefix(s, "+")) {
		return false
	}
	num, err := phonenumbers.Parse(s, region)
	return err == nil && phonenumbers.IsValidNumber(num)
}
