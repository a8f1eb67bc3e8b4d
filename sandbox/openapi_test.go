package sandbox

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/transcript-bridge/bridge/internal/openapitest"
)

// TestOpenAPIValidatorCatchesDrift proves the validation every other test relies on can fail:
// answers that break the description are reported.
func TestOpenAPIValidatorCatchesDrift(t *testing.T) {
	v := openapitest.Validator(t, OpenAPI)
	tests := []struct {
		method, path string
		status       int
		body         string
		ok           bool
	}{
		{"GET", "/workspace", 200, `{"workspace":{"id":"11111111-1111-4111-8111-111111111111","name":"A"},"balance":{"available_minutes":1},"limits":{"max_file_size_mb":1,"concurrency":1,"max_duration_hours":1,"reports_per_upload":1,"reports_per_day":1},"key":{"scopes":[],"expires_at":null}}`, true},
		{"GET", "/workspace", 200, `{"workspace":{"id":"11111111-1111-4111-8111-111111111111","name":"A"},"balance":{"available_minutes":1},"key":{"scopes":[],"expires_at":null}}`, false},
		{"GET", "/workspace", 401, `{"code":"invalid_api_key","message":"x","detail":{}}`, true},
		{"GET", "/workspace", 401, `{"code":"invalid_api_key","message":"x"}`, false},
		{"GET", "/transcriptions", 200, `{"items":[],"total":0,"limit":20,"offset":0}`, true},
		{"GET", "/transcriptions", 200, `{"items":[],"total":0,"limit":500,"offset":0}`, false},
		{"POST", "/transcriptions", 201, `{"uuid":"11111111-1111-4111-8111-111111111111","status":"processing","reports":[]}`, false},
	}
	for _, tc := range tests {
		rq, _ := http.NewRequest(tc.method, "http://sandbox"+BasePath+tc.path, nil)
		resp := &http.Response{StatusCode: tc.status, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}},
			Body: io.NopCloser(bytes.NewBufferString(tc.body)), Request: rq}
		ok, errs := v.ValidateHttpResponse(rq, resp)
		if ok != tc.ok {
			t.Errorf("validate %s %s %d %s = %v (%v), want %v", tc.method, tc.path, tc.status, tc.body, ok, errs, tc.ok)
		}
	}
}

// TestTwoSeeds runs the same file through two differently seeded sandboxes: the transcript is
// the same (it derives from the file), the workspaces and ids are not.
func TestTwoSeeds(t *testing.T) {
	a := newHarness(t)
	b := newHarness(t, func(o *Options) {
		seed, err := LoadSeed("../configs/sandbox.yaml")
		if err != nil {
			t.Fatal(err)
		}
		o.Seed = seed
	})
	file := wav(45, 0, 11)
	ra := a.waitDone(ownerKey, a.mustUpload(ownerKey, "x.wav", "ai_metadata=true", file, nil))
	rb := b.waitDone(ownerKey, b.mustUpload(ownerKey, "x.wav", "ai_metadata=true", file, nil))
	if ra["text"] != rb["text"] || ra["title"] != rb["title"] {
		t.Errorf("the same file gave different transcripts in two sandboxes")
	}
	if ra["id"] == rb["id"] || ra["author"].(map[string]any)["id"] == rb["author"].(map[string]any)["id"] {
		t.Errorf("two seeds share ids: %v %v", ra["id"], ra["author"])
	}
	var wa, wb struct{ Workspace struct{ ID string } }
	a.get(ownerKey, "/workspace").json(t, &wa)
	b.get(ownerKey, "/workspace").json(t, &wb)
	if wa.Workspace.ID == wb.Workspace.ID {
		t.Errorf("two seeds gave the same workspace id %s", wa.Workspace.ID)
	}
}
