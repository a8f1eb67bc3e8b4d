package gdrivetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The fields parameter, as "Return specific fields" documents it
// (https://developers.google.com/workspace/drive/api/guides/fields-parameter): "The fields
// parameter uses a FieldMask for response filtering"; without it "the server returns a default
// set of fields specific to the method" (files.list and files.get: kind, id, name and mimeType
// of each file, see trim); "If the fields parameter has an error or is otherwise invalid, the
// server returns an HTTP 400 Bad Request". So a field the caller does not ask for is not in
// the answer: a shortcut's shortcutDetails, say, reaches only a caller whose fields name it.

// mask is a parsed fields parameter: each field kept, with the mask of its own fields (nil:
// all of it). "*" keeps every field.
type mask map[string]mask

// parseMask parses a fields parameter: fields separated by commas, a field's own fields in
// parentheses after it ("files(id,owners(emailAddress))"), or after a slash ("user/emailAddress").
func parseMask(s string) (mask, error) {
	p := &maskParser{s: strings.ReplaceAll(s, " ", "")}
	m, err := p.list()
	if err == nil && p.i < len(p.s) {
		err = fmt.Errorf("unexpected %q at %d", p.s[p.i], p.i)
	}
	if err != nil {
		return nil, fmt.Errorf("invalid field selection %s: %w", s, err)
	}
	return m, nil
}

type maskParser struct {
	s string
	i int
}

func (p *maskParser) list() (mask, error) {
	m := mask{}
	for {
		if err := p.item(m); err != nil {
			return nil, err
		}
		if p.i >= len(p.s) || p.s[p.i] != ',' {
			return m, nil
		}
		p.i++
	}
}

func (p *maskParser) item(m mask) error {
	start := p.i
	for p.i < len(p.s) && !strings.ContainsRune(",()/", rune(p.s[p.i])) {
		p.i++
	}
	name := p.s[start:p.i]
	if name == "" {
		return fmt.Errorf("empty field at %d", start)
	}
	if p.i < len(p.s) && p.s[p.i] == '/' {
		p.i++
		sub := m[name]
		if sub == nil {
			sub = mask{}
		}
		if err := p.item(sub); err != nil {
			return err
		}
		m[name] = sub
		return nil
	}
	if p.i < len(p.s) && p.s[p.i] == '(' {
		p.i++
		sub, err := p.list()
		if err != nil {
			return err
		}
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return fmt.Errorf("missing ) after %s(", name)
		}
		p.i++
		m[name] = sub
		return nil
	}
	m[name] = nil
	return nil
}

// apply keeps of v (decoded JSON) what m selects.
func (m mask) apply(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = m.apply(e)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			sub, ok := m[k]
			if !ok {
				sub, ok = m["*"]
			}
			if !ok {
				continue
			}
			if sub != nil {
				e = sub.apply(e)
			}
			out[k] = e
		}
		return out
	}
	return v
}

// answer writes v as Drive does for a request with the query q: all of it without a fields
// parameter (the caller trims it to the method's default set), what the fields select
// otherwise, and 400 for a fields parameter that does not parse.
func answer(w http.ResponseWriter, q map[string][]string, v any) {
	fields := first(q, "fields")
	if fields == "" {
		writeJSON(w, v)
		return
	}
	m, err := parseMask(fields)
	if err != nil {
		writeError(w, "invalidParameter", driveError{status: http.StatusBadRequest, domain: "global", message: err.Error(),
			location: "fields", locationType: "parameter"})
		return
	}
	b, _ := json.Marshal(v)
	var decoded any
	json.Unmarshal(b, &decoded)
	writeJSON(w, m.apply(decoded))
}
