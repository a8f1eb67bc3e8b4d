package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Limits of the reference checked before any byte is sent.
const (
	MaxExternalIDLen  = 128
	MaxMetadataBytes  = 4096
	MaxMetadataKeyLen = 64
	MaxMetadataDepth  = 3
	MinUploadBytes    = 1024
	MaxUploadBytes    = 2 << 30
)

// credentialRe spots values the service refuses as a safeguard (keys, tokens: API keys, webhook
// secrets, cloud keys, bearer and OAuth tokens, JWTs such as Zoom download tokens); the same
// pattern as the sandbox's.
var credentialRe = regexp.MustCompile(`(?i)(mk_live_|mk_test_|whsec_|sk_live_|sk_test_|rk_live_|ghp_|gho_|github_pat_|xox[abpr]-|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|-----BEGIN [A-Z ]*PRIVATE KEY|\bbearer\s+[A-Za-z0-9._~+/-]{16,}|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.|ya29\.[A-Za-z0-9_-]{20,}|AIza[0-9A-Za-z_-]{35})`)

// ValidateExternalID checks an X-External-Id: 1 to 128 printable ASCII characters, nothing that
// looks like a credential.
func ValidateExternalID(id string) error {
	switch {
	case len(id) > MaxExternalIDLen:
		return &ValidationError{"X-External-Id", "external_id_too_long", fmt.Sprintf("%d characters; at most %d", len(id), MaxExternalIDLen)}
	case id == "":
		return &ValidationError{"X-External-Id", "external_id_invalid", "empty"}
	case credentialRe.MatchString(id):
		return &ValidationError{"X-External-Id", "external_id_invalid", "looks like a token or access key"}
	}
	for i, r := range []byte(id) {
		if r < ' ' || r > '~' {
			return &ValidationError{"X-External-Id", "external_id_invalid", fmt.Sprintf("byte %d is not printable ASCII", i)}
		}
	}
	return nil
}

// EncodeMetadata marshals v (a map or struct that encodes as a JSON object) into the X-Metadata
// value and checks it: at most 4096 bytes, keys up to 64 characters, nesting up to 3 levels,
// values strings, numbers, booleans, null or arrays of those, no credentials.
func EncodeMetadata(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", &ValidationError{"X-Metadata", "metadata_invalid_json", err.Error()}
	}
	if err := ValidateMetadata(b); err != nil {
		return "", err
	}
	return string(b), nil
}

// ValidateMetadata checks a raw X-Metadata value against the reference's rules.
func ValidateMetadata(raw []byte) error {
	if len(raw) > MaxMetadataBytes {
		return &ValidationError{"X-Metadata", "metadata_too_large", fmt.Sprintf("%d bytes; at most %d", len(raw), MaxMetadataBytes)}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return &ValidationError{"X-Metadata", "metadata_invalid_json", err.Error()}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return &ValidationError{"X-Metadata", "metadata_not_object", "must be a JSON object"}
	}
	return walkMetadata(obj, "", 1)
}

func walkMetadata(obj map[string]any, at string, level int) error {
	if level > MaxMetadataDepth {
		return &ValidationError{"X-Metadata", "metadata_too_deep", fmt.Sprintf("%s nests deeper than %d levels", at, MaxMetadataDepth)}
	}
	for k, v := range obj {
		path := strings.TrimPrefix(at+"."+k, ".")
		if k == "" || utf8.RuneCountInString(k) > MaxMetadataKeyLen {
			return &ValidationError{"X-Metadata", "metadata_key_too_long", fmt.Sprintf("key %q is empty or longer than %d characters", path, MaxMetadataKeyLen)}
		}
		if nested, ok := v.(map[string]any); ok {
			if err := walkMetadata(nested, path, level+1); err != nil {
				return err
			}
			continue
		}
		values := []any{v}
		if arr, ok := v.([]any); ok {
			values = arr
		}
		for _, item := range values {
			switch x := item.(type) {
			case nil, bool, json.Number:
			case string:
				if credentialRe.MatchString(x) {
					return &ValidationError{"X-Metadata", "metadata_value_invalid", fmt.Sprintf("%s looks like a token or access key", path)}
				}
			default:
				return &ValidationError{"X-Metadata", "metadata_value_invalid", fmt.Sprintf("%s holds a %T; only strings, numbers, booleans, null and arrays of those", path, item)}
			}
		}
	}
	return nil
}

var providerRe = regexp.MustCompile(`^[a-z0-9_-]{1,32}$`)

// ValidateIdentity checks an external identity: provider 1 to 32 of a-z 0-9 _ - (lower-cased
// by the service), external id 1 to 128 printable ASCII characters.
func ValidateIdentity(id Identity) error {
	if !providerRe.MatchString(strings.ToLower(id.Provider)) {
		return &ValidationError{"provider", "invalid_identity", fmt.Sprintf("%q is not 1 to 32 characters of a-z, 0-9, _ and -", id.Provider)}
	}
	if len(id.ExternalID) == 0 || len(id.ExternalID) > 128 {
		return &ValidationError{"external_id", "invalid_identity", "must be 1 to 128 printable ASCII characters"}
	}
	for _, b := range []byte(id.ExternalID) {
		if b < ' ' || b > '~' {
			return &ValidationError{"external_id", "invalid_identity", "must be printable ASCII"}
		}
	}
	return nil
}

// ValidateAuthor checks the form of an X-Author (email:, user:, external:) or PATCH author
// (email:, user:) value; whether the member exists is the service's to say.
func ValidateAuthor(a string, allowExternal bool) error {
	typ, val, ok := strings.Cut(a, ":")
	if !ok || val == "" {
		return &ValidationError{"author", "invalid_author", fmt.Sprintf("%q is not <type>:<value>", a)}
	}
	switch typ {
	case "email":
		if !strings.Contains(val, "@") {
			return &ValidationError{"author", "invalid_author", fmt.Sprintf("%q is not an e-mail address", val)}
		}
	case "user":
		if !uuidRe.MatchString(val) {
			return &ValidationError{"author", "invalid_author", fmt.Sprintf("%q is not a member UUID", val)}
		}
	case "external":
		p, id, ok := strings.Cut(val, ":")
		if !allowExternal {
			return &ValidationError{"author", "unsupported_author_type", "external: is not accepted here"}
		}
		if !ok {
			return &ValidationError{"author", "invalid_author", fmt.Sprintf("%q is not external:<provider>:<id>", a)}
		}
		return ValidateIdentity(Identity{Provider: p, ExternalID: id})
	default:
		return &ValidationError{"author", "unsupported_author_type", fmt.Sprintf("type %q is not email, user or external", typ)}
	}
	return nil
}

var uuidRe = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
