package api

import (
	"regexp"
	"slices"
	"strings"
)

// secretFields are the JSON fields whose values are secrets.
var secretFields = []string{"access_token", "download_token", "refresh_token", "client_secret", "private_key"}

var secretRe = regexp.MustCompile(`(mk_live_|mk_test_|whsec_)[A-Za-z0-9_+/=-]+|(?i)(bearer\s+)[A-Za-z0-9._~+/=-]+|"(` +
	strings.Join(secretFields, "|") + `)"\s*:\s*"[^"]*"|\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+`)

// paramRe matches the query parameters of signed and pre-authenticated URLs that carry a secret:
// Zoom's access_token, SharePoint's tempauth (Graph's recording content), S3's and Google
// Cloud Storage's signatures and session tokens, Azure's SAS sig, and any token.
var paramRe = regexp.MustCompile(`(?i)\b((?:access_token|tempauth|sig|signature|x-amz-signature|x-amz-security-token|x-goog-signature|x-goog-credential|token)=)[^&\s"'<>]+`)

// secretMarkers are what every match of secretRe or paramRe holds, in lower case (the
// expressions match all but the keys without regard to case).
var secretMarkers = append([]string{"mk_live_", "mk_test_", "whsec_", "bearer", "eyj", "token=", "tempauth=", "sig=", "signature="}, secretFields...)

// mayHoldSecret reports whether s holds one of secretMarkers: a text without any (most event
// texts) is left as it is without running secretRe over it, which costs tens of µs a KB. The
// expression's case folding also matches 'ſ' (long s) for 's', which ToLower keeps: a text
// with one is always run through it.
func mayHoldSecret(s string) bool {
	if strings.ContainsRune(s, 'ſ') {
		return true
	}
	lower := strings.ToLower(s)
	for _, m := range secretMarkers {
		if strings.Contains(lower, m) {
			return true
		}
	}
	return false
}

// SecretField reports whether a JSON field of that name holds a secret (its value is hidden by
// Redact in a JSON text), for redacting decoded documents field by field.
func SecretField(name string) bool {
	return slices.Contains(secretFields, strings.ToLower(name))
}

// Redact replaces API keys, webhook secrets, bearer tokens, download tokens, JSON Web Tokens
// (Zoom's download and access tokens are JWTs), the secret parameters of signed URLs (tempauth,
// signatures, tokens) and token or key fields of JSON bodies in s with "[redacted]" markers, for
// logs and error messages.
func Redact(s string) string {
	if !mayHoldSecret(s) {
		return s
	}
	return redact(s)
}

// redact is Redact without the look for markers first.
func redact(s string) string {
	s = paramRe.ReplaceAllString(s, "${1}[redacted]")
	return secretRe.ReplaceAllStringFunc(s, func(m string) string {
		for _, p := range []string{"mk_live_", "mk_test_", "whsec_"} {
			if strings.HasPrefix(m, p) {
				return p + "[redacted]"
			}
		}
		if strings.HasPrefix(m, `"`) { // a JSON field: keep its name
			return m[:strings.Index(m[1:], `"`)+2] + `:"[redacted]"`
		}
		if i := strings.IndexAny(m, " \t"); i > 0 {
			return m[:i+1] + "[redacted]"
		}
		return "[redacted]"
	})
}

// scrub returns err with the key and anything secret-looking removed from its text, keeping
// errors.Is working through Unwrap.
func scrub(err error, key string) error {
	msg := err.Error()
	clean := Redact(msg)
	if key != "" {
		clean = strings.ReplaceAll(clean, key, "[redacted]")
	}
	if clean == msg {
		return err
	}
	return &scrubbed{msg: clean, err: err}
}

type scrubbed struct {
	msg string
	err error
}

func (s *scrubbed) Error() string { return s.msg }
func (s *scrubbed) Unwrap() error { return s.err }

var _ error = (*scrubbed)(nil)
