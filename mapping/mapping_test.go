package mapping

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/transcript-bridge/bridge/connectors"
)

func job(item string) Input {
	return Input{JobID: "job-1", Recording: connectors.Recording{Source: "inbox", ItemID: item, Version: "v1", Name: "a.wav", Size: 2048}}
}

func TestMap(t *testing.T) {
	m, err := New("inbox", "localdir", "inst-1", Rules{Author: "email:sam@acme.test",
		Metadata: map[string]string{"file": "{{.Name}}", "team": "sales"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Map(context.Background(), job("calls/a.wav"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Author != "email:sam@acme.test" || res.ExternalID != "localdir:inbox:calls/a.wav@v1" {
		t.Errorf("Map = %+v", res)
	}
	var meta map[string]string
	json.Unmarshal(res.Metadata, &meta)
	want := map[string]string{"bridge_job": "job-1", "bridge_instance": "inst-1", "file": "a.wav", "team": "sales"}
	for k, v := range want {
		if meta[k] != v {
			t.Errorf("metadata[%s] = %q, want %q", k, meta[k], v)
		}
	}
}

func TestDefaultExternalIDStaysValid(t *testing.T) {
	long := strings.Repeat("deep/", 40) + "x.wav"
	for _, item := range []string{"a.wav", long, "réunion.wav"} {
		id := DefaultExternalID("localdir", "inbox", item, "v1")
		if len(id) > 128 || !printable(id) {
			t.Errorf("DefaultExternalID(%q) = %q: not a valid external id", item, id)
		}
		if DefaultExternalID("localdir", "inbox", item, "v2") == id {
			t.Errorf("two versions of %q share an external id", item)
		}
	}
}

func TestMapRefusesBadValues(t *testing.T) {
	tests := []struct {
		rules Rules
		item  string
		want  string
	}{
		{Rules{ExternalID: "{{.Name}}\n"}, "a.wav", "external_id_invalid"},
		{Rules{ExternalID: strings.Repeat("x", 129)}, "a.wav", "external_id_too_long"},
		{Rules{Metadata: map[string]string{"k": strings.Repeat("v", 4100)}}, "a.wav", "metadata_too_large"},
		{Rules{Metadata: map[string]string{"token": "mk_live_{{.Name}}"}}, "a.wav", "metadata_value_invalid"},
		{Rules{Metadata: map[string]string{"team": "{{.Fields.team}}"}}, "a.wav", "metadata.team template"},
	}
	for _, tc := range tests {
		m, err := New("inbox", "localdir", "i", tc.rules)
		if err != nil {
			t.Fatalf("New(%+v) = %v", tc.rules, err)
		}
		if _, err := m.Map(context.Background(), job(tc.item)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Map with %+v = %v, want an error naming %q", tc.rules, err, tc.want)
		}
	}
	for _, tc := range []struct {
		rules Rules
		want  string
	}{
		{Rules{Author: "sam"}, `author "sam"`},
		{Rules{Author: "slack:U1"}, "unsupported_author_type"},
		{Rules{Metadata: map[string]string{"bridge_job": "x"}}, "metadata.bridge_job: reserved"},
		{Rules{ExternalID: "{{"}, "external_id:"},
		{Rules{ExternalID: "{{.Nope}}"}, "can't evaluate field Nope"},
		{Rules{Resolve: []string{"guess"}}, `mapping.rules: "guess"`},
		{Rules{Resolve: []string{"map"}}, "map needs map_file"},
		{Rules{Resolve: []string{"static"}}, "static needs author"},
		{Rules{Resolve: []string{"email"}, Otherwise: "pray"}, `mapping.otherwise: "pray"`},
		{Rules{Provider: "Zoom Video"}, "mapping.provider"},
		{Rules{Resolve: []string{"map"}, Map: map[string]string{"u1": "sam"}}, `member "sam"`},
		{Rules{Resolve: []string{"map"}, Map: map[string]string{"u1": "external:zoom:u2"}}, "use email:"},
		{Rules{Resolve: []string{"map"}, MapFile: "/no/such.csv"}, "mapping.map_file"},
	} {
		if _, err := New("inbox", "localdir", "i", tc.rules); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want an error naming %q", tc.rules, err, tc.want)
		}
	}
}
