package bridge

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
	"github.com/transcript-bridge/bridge/mapping"
)

// nopSource and nopMapper stand for a connector and a mapper.
type (
	nopSource struct{}
	nopMapper struct{}
)

func (nopSource) List(context.Context, string) ([]connectors.Recording, string, error) {
	return nil, "", nil
}

func (nopSource) Open(context.Context, connectors.Recording) (io.ReadCloser, error) { return nil, nil }

func (nopMapper) Map(context.Context, mapping.Input) (mapping.Decision, error) {
	return mapping.Decision{}, nil
}

// TestSourceConfigValidate: each error starts with the key at fault; an unset retry deadline
// is valid and SetDefaults fills it in.
func TestSourceConfigValidate(t *testing.T) {
	ok := SourceConfig{Name: "inbox", Type: "localdir", Source: nopSource{}, Mapper: nopMapper{}}
	with := func(edit func(*SourceConfig)) SourceConfig {
		c := ok
		edit(&c)
		return c
	}
	for _, tc := range []struct {
		c    SourceConfig
		want string
	}{
		{ok, "<nil>"},
		{with(func(c *SourceConfig) { c.Name = "" }), "name: required"},
		{with(func(c *SourceConfig) { c.Type = "" }), "type: required"},
		{with(func(c *SourceConfig) { c.Source = nil }), "source: required (the connector)"},
		{with(func(c *SourceConfig) { c.Mapper = nil }), "mapper: required"},
		{with(func(c *SourceConfig) { c.Upload.Reports = []string{"a", "b", "c", "d"} }), "upload.reports: 4 slugs; at most 3"},
		{with(func(c *SourceConfig) { c.Upload.SpeakersCount = 21 }), "upload.speakers_count: 21 is not 1 to 20"},
		{with(func(c *SourceConfig) { c.RetryDeadline = -time.Hour }), "retry_deadline: -1h0m0s is negative"},
	} {
		if got := fmt.Sprint(tc.c.Validate()); got != tc.want {
			t.Errorf("Validate(%q) = %v, want %v", tc.c.Name, got, tc.want)
		}
	}
	for _, tc := range []struct{ set, want time.Duration }{{0, DefaultRetryDeadline}, {time.Hour, time.Hour}} {
		c := with(func(c *SourceConfig) { c.RetryDeadline = tc.set })
		if c.SetDefaults(); c.RetryDeadline != tc.want {
			t.Errorf("SetDefaults(retry deadline %v) = %v, want %v", tc.set, c.RetryDeadline, tc.want)
		}
	}
}
