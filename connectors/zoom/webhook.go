package zoom

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

// Sign returns the x-zm-signature of body sent at timestamp (Unix seconds): "v0=" and the hex
// HMAC-SHA256 of "v0:{timestamp}:{body}" under the webhook secret token.
func Sign(secret, timestamp string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + timestamp + ":"))
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// Encrypt answers an endpoint.url_validation: the hex HMAC-SHA256 of plainToken.
func Encrypt(secret, plainToken string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(plainToken))
	return hex.EncodeToString(mac.Sum(nil))
}

// maxSkew is how far a webhook's timestamp may be from now.
const maxSkew = 5 * time.Minute

// verify checks the signature in constant time and the timestamp's freshness.
func verify(secret string, h http.Header, body []byte, now time.Time) bool {
	ts := h.Get("x-zm-request-timestamp")
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return false
	}
	if d := now.Sub(time.Unix(secs, 0)); d > maxSkew || d < -maxSkew {
		return false
	}
	return hmac.Equal([]byte(Sign(secret, ts, body)), []byte(h.Get("x-zm-signature")))
}

// Handler receives Zoom webhooks (connectors.Pusher): every request must carry a valid
// x-zm-signature with a timestamp within 5 minutes (else 401); endpoint.url_validation is
// answered; recording.completed becomes jobs through intake before the 200, well within Zoom's
// 3 s. Its download_token is kept in memory only, for 24 hours. An app's event subscription
// delivers the recordings of every user of the account: those of a host outside users (the
// rule the sweep lists by, Source.owns) are acknowledged and ignored, at DEBUG.
func (s *Source) Handler(intake connectors.Intake) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		if s.cfg.WebhookSecret == "" {
			http.Error(w, "this source has no webhook_secret_file", http.StatusNotFound)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
		if err != nil {
			http.Error(w, "cannot read the body", http.StatusBadRequest)
			return
		}
		if !verify(s.cfg.WebhookSecret, r.Header, body, s.cfg.Now()) {
			http.Error(w, "invalid or stale x-zm-signature", http.StatusUnauthorized)
			return
		}
		var ev struct {
			Event   string `json:"event"`
			Payload struct {
				PlainToken string  `json:"plainToken"`
				AccountID  string  `json:"account_id"`
				Object     meeting `json:"object"`
			} `json:"payload"`
			DownloadToken string `json:"download_token"`
		}
		if err := json.Unmarshal(body, &ev); err != nil {
			http.Error(w, "not a Zoom event", http.StatusBadRequest)
			return
		}
		switch ev.Event {
		case "endpoint.url_validation":
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]string{"plainToken": ev.Payload.PlainToken,
				"encryptedToken": Encrypt(s.cfg.WebhookSecret, ev.Payload.PlainToken)})
		case "recording.completed":
			m := ev.Payload.Object
			if !s.owns(m) {
				s.debug("recording.completed of a host outside users: ignored", "host_id", m.HostID, "meeting_uuid", m.UUID)
				w.WriteHeader(http.StatusOK)
				return
			}
			account := ev.Payload.AccountID
			if account == "" {
				account = s.cfg.AccountID
			}
			f, ok := pick(m, s.cfg.FileTypes)
			if !ok {
				w.WriteHeader(http.StatusOK) // nothing to take (yet): the sweep looks again
				return
			}
			rec := recording(account, m, f, "")
			if ev.DownloadToken != "" {
				s.keepToken(rec.ItemID, ev.DownloadToken)
			}
			if err := intake(r.Context(), []connectors.Recording{rec}); err != nil {
				s.log("cannot store a pushed recording; Zoom will send it again", rec.ItemID, err)
				http.Error(w, "not stored; send again", http.StatusServiceUnavailable)
				return
			}
			w.WriteHeader(http.StatusOK)
		default:
			w.WriteHeader(http.StatusOK) // other events are not ours to act on
		}
	})
}

func (s *Source) keepToken(item, token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.Now()
	for k, t := range s.dlTokens { // forget expired ones
		if now.Sub(t.at) > downloadTokenLife {
			delete(s.dlTokens, k)
		}
	}
	s.dlTokens[item] = dlToken{token: token, at: now}
}

func (s *Source) downloadToken(item string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.dlTokens[item]
	if !ok || s.cfg.Now().Sub(t.at) > downloadTokenLife-time.Hour { // an hour's margin for the upload
		return "", false
	}
	return t.token, true
}
