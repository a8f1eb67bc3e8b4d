package api

import (
	"regexp"
	"strings"
)

var secretRe = regexp.MustCompile(`(mk_live_|mk_test_|whsec_)[A-Za-z0-9_+/=-]+|(?i)(bearer\s+)[A-Za-z0-9._~+/=-]+|(access_token=)[^&\s]+|"(access_token|download_token|refresh_token|client_secret|private_key)"\s*:\s*"[^"]*"`)

// Redact replaces API keys, webhook secrets, bearer tokens, download tokens and token or key
// fields of JSON bodies in s with "[redacted]" markers, for logs and error messages.
func Redact(s string) string {
	return secretRe.ReplaceAllStringFunc(s, func(m string) string {
		for _, p := range []string{"mk_live_", "mk_test_", "whsec_", "access_token="} {
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
