package webhook

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The test vector published with the Standard Webhooks specification.
const (
	specSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	specID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	specTS     = 1614265330
	specBody   = `{"test": 2432232314}`
	specSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSpecVector(t *testing.T) {
	s, err := ParseSecret(specSecret)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Sign(specID, time.Unix(specTS, 0), []byte(specBody)); got != specSig {
		t.Errorf("Sign(spec vector) = %s, want %s", got, specSig)
	}
	h := http.Header{}
	h.Set(HeaderID, specID)
	h.Set(HeaderTimestamp, fmt.Sprint(specTS))
	h.Set(HeaderSignature, specSig)
	if err := Verify(h, []byte(specBody), time.Unix(specTS+10, 0), 0, s); err != nil {
		t.Errorf("Verify(spec vector) = %v", err)
	}
	if s.Encode() != specSecret {
		t.Errorf("Encode() = %s, want the secret back", s.Encode())
	}
}

func TestVerify(t *testing.T) {
	oldS, _ := NewSecret()
	newS, _ := NewSecret()
	other, _ := NewSecret()
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"type":"transcription.completed"}`)
	rotating := Headers("msg_1", now, body, newS, oldS)
	if n := len(strings.Fields(rotating.Get(HeaderSignature))); n != 2 {
		t.Fatalf("%d signatures while rotating, want 2", n)
	}
	tests := []struct {
		name    string
		h       http.Header
		body    string
		at      time.Time
		secrets []Secret
		want    error
	}{
		{"new secret", rotating, string(body), now, []Secret{newS}, nil},
		{"old secret", rotating, string(body), now, []Secret{oldS}, nil},
		{"receiver holds both", Headers("msg_1", now, body, newS), string(body), now, []Secret{oldS, newS}, nil},
		{"wrong secret", rotating, string(body), now, []Secret{other}, ErrSignature},
		{"tampered body", rotating, `{"type":"transcription.failed"}`, now, []Secret{newS}, ErrSignature},
		{"replayed late", rotating, string(body), now.Add(6 * time.Minute), []Secret{newS}, ErrTimestamp},
		{"from the future", rotating, string(body), now.Add(-6 * time.Minute), []Secret{newS}, ErrTimestamp},
		{"within tolerance", rotating, string(body), now.Add(4 * time.Minute), []Secret{newS}, nil},
		{"no headers", http.Header{}, string(body), now, []Secret{newS}, ErrMissingHeaders},
		{"other id", withHeader(rotating, HeaderID, "msg_2"), string(body), now, []Secret{newS}, ErrSignature},
		{"bad timestamp", withHeader(rotating, HeaderTimestamp, "yesterday"), string(body), now, []Secret{newS}, ErrTimestamp},
		{"unknown version only", withHeader(rotating, HeaderSignature, "v2,abc"), string(body), now, []Secret{newS}, ErrSignature},
	}
	for _, tc := range tests {
		err := Verify(tc.h, []byte(tc.body), tc.at, 0, tc.secrets...)
		if !errors.Is(err, tc.want) && !(err == nil && tc.want == nil) {
			t.Errorf("%s: Verify = %v, want %v", tc.name, err, tc.want)
		}
	}
}

func withHeader(h http.Header, k, v string) http.Header {
	c := h.Clone()
	c.Set(k, v)
	return c
}

func TestSecrets(t *testing.T) {
	for _, bad := range []string{"", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_!!!", "whsec_" + "YWJj"} {
		if _, err := ParseSecret(bad); err == nil {
			t.Errorf("ParseSecret(%q) accepted a bad secret", bad)
		} else if strings.Contains(err.Error(), "MfKQ") {
			t.Errorf("ParseSecret error shows the secret: %v", err)
		}
	}
	s, _ := NewSecret()
	if got := fmt.Sprintf("%v %s %#v", s, s, s); strings.Contains(got, s.Encode()[6:]) {
		t.Errorf("formatting a secret shows it: %s", got)
	}
	back, err := ParseSecret(s.Encode())
	if err != nil || back.Encode() != s.Encode() {
		t.Errorf("round trip = %v", err)
	}
}

// TestParseSecrets: secrets are separated by commas or any white space (a file with one per
// line, a rotation "new,old"), none gives none, and a bad one fails naming what is wrong.
func TestParseSecrets(t *testing.T) {
	a, _ := NewSecret()
	b, _ := NewSecret()
	for _, text := range []string{a.Encode() + "," + b.Encode(), a.Encode() + "\n" + b.Encode() + "\n", " " + a.Encode() + ",\t" + b.Encode(), a.Encode() + " , " + b.Encode()} {
		got, err := ParseSecrets(text)
		if err != nil || len(got) != 2 || got[0].Encode() != a.Encode() || got[1].Encode() != b.Encode() {
			t.Errorf("ParseSecrets(%q) = %d secrets, %v; want both, in order", text, len(got), err)
		}
	}
	if got, err := ParseSecrets(" \n,"); err != nil || len(got) != 0 {
		t.Errorf("ParseSecrets(blank) = %v, %v; want none, nil", got, err)
	}
	if _, err := ParseSecrets(a.Encode() + ",nope"); err == nil || !strings.Contains(err.Error(), "whsec_") {
		t.Errorf("ParseSecrets(a bad one) = %v, want an error naming whsec_", err)
	}
}
