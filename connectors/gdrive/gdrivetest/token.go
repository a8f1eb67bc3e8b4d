package gdrivetest

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// grant is what an access token stands for: the user impersonated and the scopes asked.
type grant struct {
	subject string
	scopes  []string
}

// Token returns the user an access token this server issued stands for and the scopes it was
// asked with; ok is false for a token it did not issue. Other fakes of Google APIs signed in
// through this token endpoint (meettest) check their callers with it.
func (s *Server) Token(bearer string) (subject string, scopes []string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.tokens[strings.TrimPrefix(bearer, "Bearer ")]
	return g.subject, g.scopes, ok
}

// Delegate sets the scopes the service account's domain-wide delegation grants (the Admin
// console's list for its client ID); until it is called, any. A token asked for another scope
// while impersonating a user is refused as Google refuses it (unauthorizedClient).
func (s *Server) Delegate(scopes ...string) {
	s.mu.Lock()
	s.delegated = slices.Clone(scopes)
	if s.delegated == nil {
		s.delegated = []string{}
	}
	s.mu.Unlock()
}

// unauthorizedClient is Google's token endpoint's answer to a service account impersonating a
// user (a JWT with sub) for a scope its client ID has no domain-wide delegation of: 401 with
// this body, as recorded in https://github.com/googleapis/google-auth-library-ruby/issues/210
// (the body) and https://github.com/hlavki/g-suite-identity-sync/issues/7 ("Response-Code: 401")
// (testdata/token_unauthorized_client.json).
const unauthorizedClient = `{"error":"unauthorized_client","error_description":"Client is unauthorized to retrieve access tokens ` +
	`using this method, or client not authorized for any of the scopes requested."}`

// token checks a service account's signed JWT and issues an access token for its subject and
// scopes; impersonation needs every scope delegated (Delegate).
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	parts := strings.Split(r.PostForm.Get("assertion"), ".")
	if r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" || len(parts) != 3 {
		http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
		return
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(&s.key.PublicKey, crypto.SHA256, sum[:], sig) != nil {
		http.Error(w, `{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`, http.StatusBadRequest)
		return
	}
	var claims struct {
		Sub, Scope string
	}
	body, _ := base64.RawURLEncoding.DecodeString(parts[1])
	json.Unmarshal(body, &claims)
	scopes := strings.Fields(claims.Scope)
	if len(scopes) == 0 {
		http.Error(w, `{"error":"invalid_scope"}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sc := range scopes {
		if claims.Sub != "" && s.delegated != nil && !slices.Contains(s.delegated, sc) {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, unauthorizedClient)
			return
		}
	}
	tok := fmt.Sprintf("ya29.fake-%d", len(s.tokens)+1)
	s.tokens[tok] = grant{subject: claims.Sub, scopes: scopes}
	writeJSON(w, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3599})
}

// driveScope reports whether a token asked with scopes may call the Drive API: one of its
// scopes (https://www.googleapis.com/auth/drive, drive.readonly, drive.file, …) is Drive's.
func driveScope(scopes []string) bool {
	return slices.ContainsFunc(scopes, func(s string) bool { return strings.HasPrefix(s, "https://www.googleapis.com/auth/drive") })
}

// insufficientScope writes Google's answer to a token without the scope a method needs, as
// recorded in https://github.com/analogdotnow/Analog/issues/296 (errors[] with
// insufficientPermissions, the status, and an ErrorInfo naming ACCESS_TOKEN_SCOPE_INSUFFICIENT,
// the service and the method: testdata/error_insufficientPermissions.json).
func insufficientScope(w http.ResponseWriter, service, method string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(http.StatusForbidden)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"code": http.StatusForbidden, "message": "Request had insufficient authentication scopes.",
		"errors": []map[string]string{{"message": "Insufficient Permission", "domain": "global", "reason": "insufficientPermissions"}},
		"status": "PERMISSION_DENIED",
		"details": []map[string]any{{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "ACCESS_TOKEN_SCOPE_INSUFFICIENT",
			"domain": "googleapis.com", "metadata": map[string]string{"service": service, "method": method}}},
	}})
}
