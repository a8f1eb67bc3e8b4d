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
// replaced something.
type rule struct {
	kind  string
	re    *regexp.Regexp
	check func(candidate string) (string, bool)
	// hint is a byte every candidate holds ('@' for e-mails), to skip texts without one; 0: none.
	hint byte
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
			s.rules = append(s.rules, builtin(k, region))
		}
	}
	return s, nil
}

// Redact replaces every match of s's rules in text, counting them in counts (which may be nil
// when s has no rules).
func (s *Set) Redact(text string, counts Counts) string {
	for _, r := range s.rules {
		if r.hint != 0 && strings.IndexByte(text, r.hint) < 0 {
			continue
		}
		n := 0
		out := r.re.ReplaceAllStringFunc(text, func(m string) string {
			if r.check == nil {
				n++
				return "[" + r.kind + "]"
			}
			repl, ok := r.check(m)
			if ok {
				n++
			}
			return repl
		})
		if n > 0 {
			counts[r.kind] += n
			text = out
		}
	}
	return text
}

// Empty reports whether s redacts nothing.
func (s *Set) Empty() bool { return s == nil || len(s.rules) == 0 }
