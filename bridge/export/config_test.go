package export

import (
	"fmt"
	"testing"
)

// TestConfigValidate: unset format and layout take their defaults; each error starts with the
// key at fault.
func TestConfigValidate(t *testing.T) {
	ok := Config{Name: "nightly", Schedule: "0 2 * * *", Destination: "/srv/exports/{{.Date}}"}
	with := func(edit func(*Config)) Config {
		c := ok
		edit(&c)
		return c
	}
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{ok, "<nil>"},
		{with(func(c *Config) { c.Name = "a b" }), `name: "a b" must be set and hold no slash or space`},
		{with(func(c *Config) { c.Format = "pdf" }), `format: "pdf" is not md, txt or json`},
		{with(func(c *Config) { c.Layout = "tar" }), `layout: "tar" is not zip or files`},
		{with(func(c *Config) { c.Destination = "" }), "destination: required (a folder or s3://bucket/prefix)"},
		{with(func(c *Config) { c.Destination = "/x/{{.Nope}}" }), `destination: template: destination:1:5: executing "destination" at <.Nope>: map has no entry for key "Nope"`},
		{with(func(c *Config) { c.Keep = -1 }), "keep: -1 is negative"},
		{with(func(c *Config) { c.Schedule = "daily" }), `schedule: "daily": expected exactly 5 fields, found 1: [daily]`},
		{with(func(c *Config) { c.Since = "yesterday" }), `since: "yesterday" is not 2006-01-02 or RFC 3339`},
		{with(func(c *Config) { c.Redact, c.DefaultRegion = []string{"email", "phone"}, "DE" }), "<nil>"},
		{with(func(c *Config) { c.Redact = []string{"names"} }), `redact: unknown kind "names" (email, phone, card, iban, ip)`},
		{with(func(c *Config) { c.RedactPatterns = map[string]string{"badge": "EMP-(["} }),
			"redact_patterns.badge: error parsing regexp: missing closing ]: `[`"},
		{with(func(c *Config) { c.DefaultRegion = "XX" }), `default_region: "XX" is not a region code (ISO 3166, as US or GB)`},
	} {
		if got := fmt.Sprint(tc.c.Validate()); got != tc.want {
			t.Errorf("Validate(%q) = %v, want %v", tc.c.Name, got, tc.want)
		}
	}
	c := ok
	if err := c.Validate(); err != nil || c.Format != "md" || c.Layout != LayoutZip {
		t.Errorf("Validate(%q) = %v, format %q, layout %q, want nil, md, zip", c.Name, err, c.Format, c.Layout)
	}
	c = with(func(c *Config) { c.Format, c.Layout = "json", LayoutFiles })
	if err := c.Validate(); err != nil || c.Format != "json" || c.Layout != LayoutFiles {
		t.Errorf("Validate(%q) = %v, format %q, layout %q, want nil, json, files", c.Name, err, c.Format, c.Layout)
	}
}
