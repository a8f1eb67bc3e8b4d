// Package webhook signs and verifies webhooks the Standard Webhooks way: headers webhook-id
// (stable across attempts), webhook-timestamp (Unix seconds, per attempt) and webhook-signature
// ("v1,<base64 HMAC-SHA256 of id.timestamp.body>", several space-separated while a secret
// rotates), with secrets written "whsec_<base64>". Receivers in Go can use Verify as it is.
package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Header names.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// secretPrefix marks a Standard Webhooks secret.
const secretPrefix = "whsec_"

// DefaultTolerance is how far a timestamp may be from the receiver's clock (5 minutes).
const DefaultTolerance = 5 * time.Minute

// Secret is a signing key. Its String form is redacted; Encode gives the whsec_ form.
type Secret struct {
	key []byte
	// macs holds HMACs keyed with key, reused: a new one hashes the key's pads again, where
	// Reset only restores them. Nil in a zero Secret (mac then makes one per call).
	macs *sync.Pool
}

// newSecret returns the Secret of key, with its pool of HMACs.
func newSecret(key []byte) Secret {
	return Secret{key: key, macs: &sync.Pool{New: func() any { return hmac.New(sha256.New, key) }}}
}

// NewSecret returns a fresh secret of 32 random bytes.
func NewSecret() (Secret, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return Secret{}, fmt.Errorf("new secret: %w", err)
	}
	return newSecret(b), nil
}

// ParseSecret reads "whsec_<base64>" (24 to 64 bytes once decoded). The error never contains
// the secret.
func ParseSecret(s string) (Secret, error) {
	s = strings.TrimSpace(s)
	raw, ok := strings.CutPrefix(s, secretPrefix)
	if !ok {
		return Secret{}, errors.New("secret: must start with whsec_")
	}
	key, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return Secret{}, errors.New("secret: the part after whsec_ is not base64")
	}
	if len(key) < 24 || len(key) > 64 {
		return Secret{}, fmt.Errorf("secret: %d bytes; 24 to 64 are needed", len(key))
	}
	return newSecret(key), nil
}

// ParseSecrets parses the whsec_ secrets of text, separated by commas or white space (several
// while a secret rotates: a secret file, webhooks[].secret, BRIDGE_WEBHOOK_SECRET). It fails on
// the first that ParseSecret refuses; text with no secret gives none.
func ParseSecrets(text string) ([]Secret, error) {
	var out []Secret
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
		s, err := ParseSecret(f)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Encode returns the secret as "whsec_<base64>", to hand to the receiver once.
func (s Secret) Encode() string { return secretPrefix + base64.StdEncoding.EncodeToString(s.key) }

// String is redacted so a secret cannot reach a log by accident.
func (s Secret) String() string { return secretPrefix + "[redacted]" }

// GoString is redacted too (%#v).
func (s Secret) GoString() string { return s.String() }

// Sign returns "v1,<base64 HMAC-SHA256 of id.timestamp.body>".
func (s Secret) Sign(id string, ts time.Time, body []byte) string {
	return "v1," + base64.StdEncoding.EncodeToString(s.mac(id, strconv.FormatInt(ts.Unix(), 10), body))
}

func (s Secret) mac(id, ts string, body []byte) []byte {
	var h hash.Hash
	if s.macs == nil {
		h = hmac.New(sha256.New, s.key)
	} else {
		h = s.macs.Get().(hash.Hash)
		defer s.macs.Put(h)
		h.Reset()
	}
	prefix := make([]byte, 0, len(id)+len(ts)+2)
	h.Write(append(append(append(append(prefix, id...), '.'), ts...), '.'))
	h.Write(body)
	return h.Sum(nil)
}

// Headers returns the three headers of one delivery attempt, signed with every secret given
// (the new one and the old one while rotating).
func Headers(id string, ts time.Time, body []byte, secrets ...Secret) http.Header {
	h := make(http.Header, 3)
	SetHeaders(h, id, ts, body, secrets...)
	return h
}

// The header names as http.Header keeps them (canonical form).
var (
	keyID        = http.CanonicalHeaderKey(HeaderID)
	keyTimestamp = http.CanonicalHeaderKey(HeaderTimestamp)
	keySignature = http.CanonicalHeaderKey(HeaderSignature)
)

// SetHeaders sets in h the three headers Headers returns, replacing any of the same names.
func SetHeaders(h http.Header, id string, ts time.Time, body []byte, secrets ...Secret) {
	unix := strconv.FormatInt(ts.Unix(), 10)
	sig := ""
	for i, s := range secrets {
		if i > 0 {
			sig += " "
		}
		sig += "v1," + base64.StdEncoding.EncodeToString(s.mac(id, unix, body))
	}
	h[keyID], h[keyTimestamp], h[keySignature] = []string{id}, []string{unix}, []string{sig}
}

// Verification failures.
var (
	ErrMissingHeaders = errors.New("webhook: webhook-id, webhook-timestamp or webhook-signature missing")
	ErrTimestamp      = errors.New("webhook: timestamp too far from now")
	ErrSignature      = errors.New("webhook: no signature matches")
)

// Verify checks a received webhook against the receiver's secrets (several while rotating):
// the timestamp must be within tolerance of now (0 means DefaultTolerance), and one of the
// v1 signatures must match, compared in constant time.
func Verify(h http.Header, body []byte, now time.Time, tolerance time.Duration, secrets ...Secret) error {
	id, tsText, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if id == "" || tsText == "" || sigs == "" {
		return ErrMissingHeaders
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %q is not Unix seconds", ErrTimestamp, tsText)
	}
	if tolerance == 0 {
		tolerance = DefaultTolerance
	}
	if math.Abs(float64(now.Unix()-ts)) > tolerance.Seconds() {
		return fmt.Errorf("%w: %s, now %s", ErrTimestamp, time.Unix(ts, 0).UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	for _, s := range secrets {
		want := s.mac(id, tsText, body)
		for _, sig := range strings.Fields(sigs) {
			version, value, ok := strings.Cut(sig, ",")
			if !ok || version != "v1" {
				continue
			}
			got, err := base64.StdEncoding.DecodeString(value)
			if err == nil && hmac.Equal(got, want) {
				return nil
			}
		}
	}
	return ErrSignature
}
