package sandbox

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
)

// Key prefix and scope identifiers. reports:write and members:write are our names for the two
// rights whose identifiers the reference does not show.
const (
	keyPrefix    = "mk_live_"
	scopeRead    = "read"
	scopeUpload  = "uploads:write"
	scopeReports = "reports:write"
	scopeDelete  = "transcriptions:delete"
	scopeMembers = "members:write"
)

// principal is who a request acts for: the key, its workspace and the member who created it.
type principal struct {
	keyHash     string
	last4       string
	oauth       bool
	workspaceID string
	memberID    string
	memberRole  string
	scopes      map[string]bool
	scopeList   []string
	expiresAt   sql.NullInt64
}

type principalKey struct{}

func principalFrom(r *http.Request) *principal {
	p, _ := r.Context().Value(principalKey{}).(*principal)
	return p
}

func hashKey(k string) string {
	sum := sha256.Sum256([]byte(k))
	return hex.EncodeToString(sum[:])
}

func last4(k string) string {
	if len(k) <= 4 {
		return k
	}
	return k[len(k)-4:]
}

// keyInURL reports whether a query parameter carries a key: a value with the key prefix or a
// parameter named like a credential. Such requests are refused with 401 even with a good header.
func keyInURL(r *http.Request) bool {
	for name, vals := range r.URL.Query() {
		switch strings.ToLower(name) {
		case "api_key", "apikey", "key", "access_token", "token":
			return true
		}
		for _, v := range vals {
			if strings.HasPrefix(v, keyPrefix) {
				return true
			}
		}
	}
	return false
}

// authenticate resolves the bearer key (401 for missing, invalid, revoked, expired keys, keys of
// members who left and keys in the URL; 403 api_access_denied on a plan without API access).
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if keyInURL(r) {
			writeError(w, r, http.StatusUnauthorized, "api_key_in_url", "API keys are not accepted in the URL; send Authorization: Bearer <key>", nil)
			return
		}
		scheme, token, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
		token = strings.TrimSpace(token)
		if !strings.EqualFold(scheme, "Bearer") || token == "" { // the scheme is case-insensitive (RFC 9110)
			writeError(w, r, http.StatusUnauthorized, "missing_api_key", "missing Authorization: Bearer <key> header", nil)
			return
		}
		p, err := s.lookupKey(r.Context(), token)
		if err != nil {
			internalError(w, r, err)
			return
		}
		if info := infoFrom(r); info != nil && p != nil {
			info.keyLast = p.last4
		}
		switch {
		case p == nil:
			writeError(w, r, http.StatusUnauthorized, "invalid_api_key", "the API key is not valid", nil)
			return
		case p.revoked:
			writeError(w, r, http.StatusUnauthorized, "api_key_revoked", "the API key was revoked", nil)
			return
		case p.expiresAt.Valid && s.now().UnixNano() >= p.expiresAt.Int64:
			writeError(w, r, http.StatusUnauthorized, "api_key_expired", "the API key has expired", nil)
			return
		case !p.memberActive:
			writeError(w, r, http.StatusUnauthorized, "api_key_deactivated", "the key's creator is no longer a member of the workspace", nil)
			return
		case p.plan == "free":
			writeError(w, r, http.StatusForbidden, "api_access_denied", "the workspace plan does not include API access", map[string]any{"plan": p.plan})
			return
		}
		ctx := context.WithValue(r.Context(), principalKey{}, &p.principal)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

type keyRow struct {
	principal
	revoked      bool
	memberActive bool
	plan         string
}

func (s *Server) lookupKey(ctx context.Context, token string) (*keyRow, error) {
	var k keyRow
	var kind, scopes string
	err := s.db.QueryRowContext(ctx, `SELECT k.hash, k.last4, k.kind, k.workspace_id, k.member_id, k.scopes, k.expires_at,
		k.revoked, m.active, m.role, w.plan
		FROM api_keys k JOIN members m ON m.id = k.member_id JOIN workspaces w ON w.id = k.workspace_id
		WHERE k.hash = ?`, hashKey(token)).Scan(&k.keyHash, &k.last4, &kind, &k.workspaceID, &k.memberID, &scopes,
		&k.expiresAt, &k.revoked, &k.memberActive, &k.memberRole, &k.plan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	k.oauth = kind == "oauth"
	k.scopes = map[string]bool{}
	k.scopeList = []string{}
	for _, sc := range strings.Fields(scopes) {
		k.scopes[sc] = true
		k.scopeList = append(k.scopeList, sc)
	}
	return &k, nil
}

// scopeCodes maps each right to the 403 code given without it.
var scopeCodes = map[string]string{
	scopeUpload:  "upload_scope_required",
	scopeReports: "reports_scope_required",
	scopeDelete:  "delete_scope_required",
	scopeMembers: "members_scope_required",
}

// require answers 403 with the scope's code and returns false when the key lacks scope.
func require(w http.ResponseWriter, r *http.Request, p *principal, scope string) bool {
	if p.scopes[scope] {
		return true
	}
	code := scopeCodes[scope]
	if code == "" {
		code = "read_scope_required"
	}
	writeError(w, r, http.StatusForbidden, code, "the API key lacks the "+scope+" right", map[string]any{"scope": scope})
	return false
}
