package status

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// cookieName is the session cookie's name.
const cookieName = "bridge_status_session"

// maxSessions bounds the sessions kept: past it, the one expiring first is dropped.
const maxSessions = 1000

// session is one signed-in browser. Its id is only in the cookie and, hashed, in the map; its
// CSRF token goes into every state-changing form.
type session struct {
	id string
	// tag names the session in the audit log without revealing its id: the first 8 hex digits
	// of the SHA-256 of the id.
	tag     string
	csrf    string
	expires time.Time
	flash   string // a message for the next page shown (guarded by sessions.mu)
}

// sessions are the live sessions, keyed by the SHA-256 of their id (a lookup's timing then
// says nothing of the id).
type sessions struct {
	mu    sync.Mutex
	ttl   time.Duration
	byKey map[[32]byte]*session
}

func newSessions(ttl time.Duration) *sessions {
	return &sessions{ttl: ttl, byKey: map[[32]byte]*session{}}
}

// randomToken returns 32 random bytes in URL-safe base64; it fails only when the system's
// random source does.
func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// start creates a session expiring ttl after now. It fails only when the system's random
// source does.
func (ss *sessions) start(now time.Time) (*session, error) {
	id, err := randomToken()
	if err != nil {
		return nil, err
	}
	csrf, err := randomToken()
	if err != nil {
		return nil, err
	}
	key := sha256.Sum256([]byte(id))
	s := &session{id: id, tag: hex.EncodeToString(key[:])[:8], csrf: csrf, expires: now.Add(ss.ttl)}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var first *[32]byte
	for k, o := range ss.byKey {
		if now.After(o.expires) {
			delete(ss.byKey, k)
		} else if first == nil || o.expires.Before(ss.byKey[*first].expires) {
			first = &k
		}
	}
	if len(ss.byKey) >= maxSessions && first != nil {
		delete(ss.byKey, *first)
	}
	ss.byKey[key] = s
	return s, nil
}

// find returns the live session of id, or nil (unknown, or expired: then it is dropped).
func (ss *sessions) find(id string, now time.Time) *session {
	if id == "" {
		return nil
	}
	key := sha256.Sum256([]byte(id))
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s := ss.byKey[key]
	if s != nil && now.After(s.expires) {
		delete(ss.byKey, key)
		return nil
	}
	return s
}

// end drops the session.
func (ss *sessions) end(s *session) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.byKey, sha256.Sum256([]byte(s.id)))
}

// setFlash keeps msg for the session's next page.
func (ss *sessions) setFlash(s *session, msg string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s.flash = msg
}

// takeFlash returns the session's message and forgets it.
func (ss *sessions) takeFlash(s *session) string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	msg := s.flash
	s.flash = ""
	return msg
}

// sessionOf returns the request's live session, or nil.
func (p *Page) sessionOf(r *http.Request) *session {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return nil
	}
	return p.sessions.find(c.Value, p.now())
}

// setCookie hands the session's id to the browser: HttpOnly, SameSite=Strict, Secure when the
// request came over TLS (here, or to a trusted proxy) or SecureCookies says so, for the
// session's lifetime.
func (p *Page) setCookie(w http.ResponseWriter, r *http.Request, s *session) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.id, Path: "/", HttpOnly: true, Secure: p.secure(r),
		SameSite: http.SameSiteStrictMode, Expires: s.expires, MaxAge: int(p.o.SessionTTL / time.Second)})
}

// secure reports whether the session cookie is Secure for r.
func (p *Page) secure(r *http.Request) bool {
	return p.o.SecureCookies || viaTLS(r, p.o.TrustedProxies)
}

// clearCookie removes the session cookie.
func (p *Page) clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", HttpOnly: true, Secure: p.secure(r),
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
}

// validCSRF reports whether the form's csrf field is the session's token (constant time).
func validCSRF(r *http.Request, s *session) bool {
	got := r.PostFormValue("csrf")
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf)) == 1
}

// sameToken reports whether given is the admin token, in time independent of where they
// differ (both are hashed first, so not of their lengths either).
func sameToken(given, token string) bool {
	a, b := sha256.Sum256([]byte(given)), sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}
