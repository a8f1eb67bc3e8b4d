package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// languages are the codes the reference lists, plus auto.
var languages = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range strings.Fields(`auto en es ru zh hi ar pt bn fr de ja ko tr it vi pl uk nl id th fa sv cs ro
		el hu da fi no sk he ms bg hr sr sl lt lv et ta te mr ur sw ml kn gu pa my ne si km lo az kk uz ka hy sq bs
		mk is mn tg tk tt ca eu gl cy af tl jw su yo ha so am sn mg ln mt lb oc br nn fo sd ps ht mi haw yi ba be as
		bo sa la`) {
		m[c] = true
	}
	return m
}()

var uuidRe = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func isUUID(s string) bool { return uuidRe.MatchString(s) }

// secretRe matches values that look like credentials; the reference rejects them in
// X-External-Id and X-Metadata as a safeguard.
var secretRe = regexp.MustCompile(`(?i)(mk_live_|mk_test_|whsec_|sk_live_|sk_test_|rk_live_|ghp_|gho_|github_pat_|xox[abpr]-|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|-----BEGIN [A-Z ]*PRIVATE KEY|\bbearer\s+[A-Za-z0-9._~+/-]{16,}|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.|ya29\.[A-Za-z0-9_-]{20,}|AIza[0-9A-Za-z_-]{35})`)

func looksLikeSecret(s string) bool { return secretRe.MatchString(s) }

// fieldError is a validation failure: the reference's code and a message naming the field.
type fieldError struct {
	code    string
	message string
	detail  map[string]any
}

func (e *fieldError) Error() string { return e.code + ": " + e.message }

// validateExternalID applies the X-External-Id rules: 1 to 128 printable ASCII characters, no
// line breaks, nothing that looks like a credential.
func validateExternalID(v string) *fieldError {
	if len(v) > 128 {
		return &fieldError{"external_id_too_long", fmt.Sprintf("X-External-Id has %d characters; at most 128 are allowed", len(v)), map[string]any{"length": len(v), "max": 128}}
	}
	if v == "" {
		return &fieldError{"external_id_invalid", "X-External-Id is empty", nil}
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return &fieldError{"external_id_invalid", fmt.Sprintf("X-External-Id has a character that is not printable ASCII at byte %d", i), map[string]any{"position": i}}
		}
	}
	if looksLikeSecret(v) {
		return &fieldError{"external_id_invalid", "X-External-Id looks like a token or access key and was rejected as a safeguard", nil}
	}
	return nil
}

// validateMetadata applies the X-Metadata rules and returns the value as sent.
func validateMetadata(v string) *fieldError {
	if len(v) > 4096 {
		return &fieldError{"metadata_too_large", fmt.Sprintf("X-Metadata has %d bytes; at most 4096 are allowed", len(v)), map[string]any{"size": len(v), "max": 4096}}
	}
	if !utf8.ValidString(v) {
		return &fieldError{"metadata_invalid_json", "X-Metadata is not valid UTF-8", nil}
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(v)))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil || dec.More() {
		return &fieldError{"metadata_invalid_json", "X-Metadata is not one JSON value", nil}
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return &fieldError{"metadata_not_object", "X-Metadata must be a JSON object", nil}
	}
	return checkMetadataObject(obj, 1, "")
}

func checkMetadataObject(obj map[string]any, depth int, path string) *fieldError {
	if depth > 3 {
		return &fieldError{"metadata_too_deep", fmt.Sprintf("X-Metadata nests deeper than 3 levels at %q", path), map[string]any{"path": path, "max_depth": 3}}
	}
	for k, val := range obj {
		p := strings.TrimPrefix(path+"."+k, ".")
		if k == "" {
			return &fieldError{"metadata_key_invalid", "X-Metadata has an empty key", map[string]any{"path": path}}
		}
		if utf8.RuneCountInString(k) > 64 {
			return &fieldError{"metadata_key_too_long", fmt.Sprintf("X-Metadata key %q is longer than 64 characters", k), map[string]any{"key": k, "max": 64}}
		}
		switch t := val.(type) {
		case map[string]any:
			if err := checkMetadataObject(t, depth+1, p); err != nil {
				return err
			}
		case []any:
			for i, item := range t {
				if !isScalar(item) {
					return &fieldError{"metadata_value_invalid", fmt.Sprintf("X-Metadata %s[%d]: arrays may hold only strings, numbers, booleans and null", p, i), map[string]any{"path": fmt.Sprintf("%s[%d]", p, i)}}
				}
				if s, ok := item.(string); ok && looksLikeSecret(s) {
					return secretMetadata(p)
				}
			}
		default:
			if !isScalar(val) {
				return &fieldError{"metadata_value_invalid", fmt.Sprintf("X-Metadata %s: unsupported value", p), map[string]any{"path": p}}
			}
			if s, ok := val.(string); ok && looksLikeSecret(s) {
				return secretMetadata(p)
			}
		}
	}
	return nil
}

func secretMetadata(path string) *fieldError {
	return &fieldError{"metadata_value_invalid", fmt.Sprintf("X-Metadata %s looks like a token or access key and was rejected as a safeguard", path), map[string]any{"path": path, "reason": "looks_like_secret"}}
}

func isScalar(v any) bool {
	switch v.(type) {
	case nil, string, bool, json.Number:
		return true
	}
	return false
}

var providerRe = regexp.MustCompile(`^[a-z0-9_-]{1,32}$`)

// validateIdentity checks an external identity; it returns the reason ("" when valid). The
// provider is compared after lower-casing.
func validateIdentity(provider, externalID string) string {
	if !providerRe.MatchString(strings.ToLower(provider)) {
		return "provider must be 1 to 32 characters from a-z, 0-9, underscore and hyphen"
	}
	if len(externalID) < 1 || len(externalID) > 128 {
		return "external_id must be 1 to 128 printable ASCII characters"
	}
	for i := 0; i < len(externalID); i++ {
		if externalID[i] < 0x20 || externalID[i] > 0x7e {
			return "external_id must be 1 to 128 printable ASCII characters"
		}
	}
	return ""
}

// authorRef is a parsed X-Author (or PATCH author) value.
type authorRef struct {
	kind     string // email | user | external
	value    string
	provider string
}

// parseAuthor parses "<type>:<value>"; allowExternal is false for PATCH, which lists no
// external form.
func parseAuthor(v string, allowExternal bool) (authorRef, *fieldError) {
	typ, rest, ok := strings.Cut(v, ":")
	if !ok || typ == "" || rest == "" {
		return authorRef{}, &fieldError{"invalid_author", fmt.Sprintf("author %q is not of the form <type>:<value>", v), nil}
	}
	switch typ {
	case "email":
		if !strings.Contains(rest, "@") {
			return authorRef{}, &fieldError{"invalid_author", fmt.Sprintf("author %q: %q is not an e-mail address", v, rest), nil}
		}
		return authorRef{kind: typ, value: rest}, nil
	case "user":
		if !isUUID(rest) {
			return authorRef{}, &fieldError{"invalid_author", fmt.Sprintf("author %q: %q is not a UUID", v, rest), nil}
		}
		return authorRef{kind: typ, value: strings.ToLower(rest)}, nil
	case "external":
		if !allowExternal {
			break
		}
		provider, id, ok := strings.Cut(rest, ":")
		if !ok || validateIdentity(provider, id) != "" {
			return authorRef{}, &fieldError{"invalid_author", fmt.Sprintf("author %q is not external:<provider>:<id>", v), nil}
		}
		return authorRef{kind: typ, value: id, provider: strings.ToLower(provider)}, nil
	}
	return authorRef{}, &fieldError{"unsupported_author_type", fmt.Sprintf("author type %q is not supported", typ), map[string]any{"type": typ}}
}
