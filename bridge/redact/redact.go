// Package redact removes personal data from texts before they leave the bridge: e-mail
// addresses, phone numbers, payment card numbers, IBANs, IP addresses and named patterns of the
// configuration. Each match becomes its kind in brackets ("[email]", "[<pattern name>]") and is
// counted. Numbers are checked before they are replaced (a phone number must be valid for its
// region, a card number must pass the Luhn check, an IBAN its mod-97 check digits, an IP address
// must parse), so ordinary numbers survive.
package redact

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// The built-in kinds, as the redact key lists them.
const (
	Email = "email"
	Phone = "phone"
	Card  = "card"
	IBAN  = "iban"
	IP    = "ip"
)

// Kinds are the built-in kinds in the order they are applied (after the named patterns).
var Kinds = []string{Email, IBAN, Card, IP, Phone}

// Counts says how many matches of each kind were replaced (kinds with none are absent).
type Counts map[string]int

// Add adds the counts of o to c.
func (c Counts) Add(o Counts) {
	for k, n := range o {
		c[k] += n
	}
}

// Redactor replaces what it finds in a text by its kind in brackets, counting each replacement
// in counts. It is safe for concurrent use.
type Redactor interface {
	Redact(text string, counts Counts) string
}

// Config is what a destination (a webhook endpoint, an export) says about redaction.
type Config struct {
	// Kinds are the built-in kinds to redact: email, phone, card, iban, ip.
	Kinds []string
	// Patterns are named regular expressions (RE2 syntax); each match becomes [name].
	Patterns map[string]string
	// DefaultRegion is the region (ISO 3166 code, "US", "GB") of phone numbers written without
	// their country code; without one, only numbers starting with + are found.
	DefaultRegion string
}

// Empty reports whether c redacts nothing.
func (c Config) Empty() bool { return len(c.Kinds) == 0 && len(c.Patterns) == 0 }

// Validate returns the first setting at fault, its error starting with the key ("redact:
// unknown kind \"ssn\"", "redact_patterns.badge: error parsing regexp: ...",
// "default_region: ..."), or nil.
func (c Config) Validate() error {
	_, err := New(c)
	return err
}

// rule is one pass over a text: a candidate expression and a check of each candidate, which
// returns the text to put in its place (or the candidate itself to keep it) and whether it
// replaced something. A built-in rule also has next, which finds where a candidate may start
// (a byte scan, much faster than an unanchored expression), and re is then anchored there.
type rule struct {
	kind  string
	re    *regexp.Regexp
	check func(candidate string) (string, bool)
	// next returns the first index at or after from where a candidate may start, or -1; nil:
	// re is unanchored and searched by the regexp package.
	next func(text string, from int) int
}

// Set is a Redactor made of a Config: the named patterns (in name order), then the built-in
// kinds in the order of Kinds.
type Set struct {
	rules []rule
}

// New checks c and compiles its rules. A Set with no rules returns texts as they are.
func New(c Config) (*Set, error) {
	s := &Set{}
	for _, name := range slices.Sorted(maps.Keys(c.Patterns)) {
		if name == "" || strings.ContainsAny(name, "[]") {
			return nil, fmt.Errorf("redact_patterns: name %q must be set and hold no bracket", name)
		}
		re, err := regexp.Compile(c.Patterns[name])
		if err != nil {
			return nil, fmt.Errorf("redact_patterns.%s: %w", name, err)
		}
		if re.MatchString("") {
			return nil, fmt.Errorf("redact_patterns.%s: %q matches the empty text", name, c.Patterns[name])
		}
		s.rules = append(s.rules, rule{kind: name, re: re})
	}
	region := strings.ToUpper(c.DefaultRegion)
	if region != "" && !phonenumbers.GetSupportedRegions()[region] {
		return nil, fmt.Errorf("default_region: %q is not a region code (ISO 3166, as US or GB)", c.DefaultRegion)
	}
	for _, k := range c.Kinds {
		if !slices.Contains(Kinds, k) {
			return nil, fmt.Errorf("redact: unknown kind %q (email, phone, card, iban, ip)", k)
		}
	}
	for _, k := range Kinds {
		if slices.Contains(c.Kinds, k) {
			s.rules = append(s.rules, builtin(k, region)...)
		}
	}
	return s, nil
}

// Redact replaces every match of s's rules in text, counting them in counts (which may be nil
// when s has no rules).
func (s *Set) Redact(text string, counts Counts) string {
	for _, r := range s.rules {
		var n int
		if r.next != nil {
			text, n = r.scan(text)
		} else {
			text, n = r.replaceAll(text)
		}
		if n > 0 {
			counts[r.kind] += n
		}
	}
	return text
}

// replace returns what replaces candidate m, and whether it is a match.
func (r *rule) replace(m string) (string, bool) {
	if r.check == nil {
		return "[" + r.kind + "]", true
	}
	return r.check(m)
}

// replaceAll applies an unanchored rule (a named pattern) to text.
func (r *rule) replaceAll(text string) (string, int) {
	n := 0
	out := r.re.ReplaceAllStringFunc(text, func(m string) string {
		repl, ok := r.replace(m)
		if ok {
			n++
		}
		return repl
	})
	if n == 0 {
		return text, 0
	}
	return out, n
}

// scan applies a built-in rule to text: its anchored expression at each place next finds,
// a candidate's end being where the search goes on.
func (r *rule) scan(text string) (string, int) {
	var b strings.Builder
	n, done := 0, 0 // text[:done] is in b (once n > 0)
	for i := 0; i < len(text); {
		at := r.next(text, i)
		if at < 0 {
			break
		}
		loc := r.re.FindStringIndex(text[at:])
		if loc == nil || loc[1] == 0 {
			i = at + 1
			continue
		}
		m := text[at : at+loc[1]]
		if repl, ok := r.replace(m); ok {
			if n == 0 {
				b.Grow(len(text))
			}
			b.WriteString(text[done:at])
			b.WriteString(repl)
			done, n = at+len(m), n+1
		}
		i = at + len(m)
	}
	if n == 0 {
		return text, 0
	}
	b.WriteString(text[done:])
	return b.String(), n
}

// Empty reports whether s redacts nothing.
func (s *Set) Empty() bool { return s == nil || len(s.rules) == 0 }
