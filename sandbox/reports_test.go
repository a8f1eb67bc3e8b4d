package sandbox

import (
	"testing"
	"time"
)

func requestReports(h *harness, key, id string, slugs ...string) *response {
	return h.do(req{method: "POST", path: "/transcriptions/" + id + "/reports", key: key, jsonBody: map[string]any{"reports": slugs}})
}

func TestReportRules(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.TimeScale = 1 })
	id := h.mustUpload(ownerKey, "a.wav", "", wav(2, 0, 1), nil)
	// Rule 3: accepted while queued or processing.
	r := requestReports(h, ownerKey, id, "summary", "deal-notes")
	if r.status != 202 {
		t.Fatalf("reports on a queued transcription = %d %s", r.status, r.body)
	}
	var first struct{ Reports []reportRef }
	r.json(t, &first)
	if len(first.Reports) != 2 || first.Reports[0].Status != "queued" || first.Reports[0].Slug != "summary" {
		t.Errorf("report refs = %+v", first.Reports)
	}
	// Rule 1: a slug being generated returns that report, not a duplicate.
	var again struct{ Reports []reportRef }
	requestReports(h, ownerKey, id, "summary").json(t, &again)
	if len(again.Reports) != 1 || again.Reports[0].ID != first.Reports[0].ID {
		t.Errorf("second request of summary = %+v, want the same report %s", again.Reports, first.Reports[0].ID)
	}
	if n := len(h.record(ownerKey, id)["prompt_results"].([]any)); n != 2 {
		t.Errorf("%d reports stored, want 2", n)
	}
	for _, tc := range []struct {
		slugs  []string
		status int
		code   string
	}{
		{[]string{"summary", "action-items", "meeting-minutes", "follow-up-email"}, 422, "too_many_reports"},
		{[]string{"nope"}, 422, "prompt_not_found"},
		{[]string{"my-draft"}, 422, "prompt_not_found"},
		{[]string{}, 422, "invalid_body"},
	} {
		if r := requestReports(h, ownerKey, id, tc.slugs...); r.status != tc.status || r.code() != tc.code {
			t.Errorf("reports %v = %d %s, want %d %s", tc.slugs, r.status, r.code(), tc.status, tc.code)
		}
	}
	// Rule 4: a failed transcription gives 409 transcription_failed.
	bad := h.mustUpload(ownerKey, "bad.mp3", "", make([]byte, 2000), nil)
	h2 := h
	deadline := time.Now().Add(20 * time.Second)
	for h2.record(ownerKey, bad)["status"] != "failed" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if r := requestReports(h, ownerKey, bad, "summary"); r.status != 409 || r.code() != "transcription_failed" {
		t.Errorf("reports on a failed transcription = %d %s, want 409 transcription_failed", r.status, r.code())
	}
}

func TestReportCompletedIsNotRegenerated(t *testing.T) {
	h := newHarness(t)
	id := h.mustUpload(ownerKey, "a.wav", "reports=summary", wav(2, 0, 1), nil)
	rec := h.waitDone(ownerKey, id)
	rep := rec["prompt_results"].([]any)[0].(map[string]any)
	var out struct{ Reports []reportRef }
	r := requestReports(h, ownerKey, id, "summary")
	r.json(t, &out)
	if r.status != 202 || out.Reports[0].ID != rep["id"] || out.Reports[0].Status != "completed" {
		t.Errorf("re-requesting a completed report = %d %+v, want the existing completed report %v", r.status, out.Reports, rep["id"])
	}
}

func TestReportGenerationLimit(t *testing.T) {
	h := newHarness(t)
	id := h.mustUpload(ownerKey, "a.wav", "", wav(2, 0, 1), nil)
	h.waitDone(ownerKey, id)
	// The broken template always fails, so each request makes a new generation.
	for i := range 30 {
		if r := requestReports(h, ownerKey, id, "broken"); r.status != 202 {
			t.Fatalf("generation %d = %d %s", i+1, r.status, r.body)
		}
		h.waitDone(ownerKey, id)
	}
	r := requestReports(h, ownerKey, id, "broken")
	if r.status != 429 || r.code() != "report_generation_limit" {
		t.Errorf("31st generation = %d %s, want 429 report_generation_limit", r.status, r.code())
	}
	rec := h.record(ownerKey, id)
	if rep := rec["prompt_results"].([]any)[0].(map[string]any); rep["status"] != "failed" || rep["error_code"] == nil || rep["text"] != nil {
		t.Errorf("failed report = %v", rep)
	}
}

func TestReportQuotas(t *testing.T) {
	h := newHarness(t)
	setBalance(t, h, tightWSID, 100)
	// Tight: 4 reports a day.
	id := h.mustUpload(tightKey, "a.wav", "reports=summary,action-items,meeting-minutes", wav(2, 0, 1), nil)
	r := h.upload(tightKey, "b.wav", "reports=summary,action-items", wav(2, 0, 2), nil)
	if r.status != 429 || r.code() != "daily_reports_quota_exceeded" || r.header.Get("Retry-After") == "" {
		t.Errorf("upload over the daily report cap = %d %s, want 429 daily_reports_quota_exceeded", r.status, r.code())
	}
	h.waitDone(tightKey, id)
	if r := requestReports(h, tightKey, id, "follow-up-email"); r.status != 202 {
		t.Errorf("4th report of the day = %d %s", r.status, r.body)
	}
	if r := requestReports(h, tightKey, id, "key-decisions"); r.status != 429 || r.code() != "daily_reports_quota_exceeded" {
		t.Errorf("5th report of the day = %d %s", r.status, r.code())
	}
	h.clock.Advance(24 * time.Hour)
	if r := requestReports(h, tightKey, id, "key-decisions"); r.status != 202 {
		t.Errorf("report the next day = %d %s", r.status, r.body)
	}
}

func TestPendingReportsCap(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.TimeScale = 100 // nothing finishes during the test
		o.Seed.Workspaces[0].Limits.ReportsPerDay = 1000
	})
	for i := range 66 {
		h.mustUpload(ownerKey, "a.wav", "reports=summary,action-items,meeting-minutes", wav(2, 0, uint64(i)), nil)
	}
	// 198 pending: three more exceed 200.
	r := h.upload(ownerKey, "a.wav", "reports=summary,action-items,meeting-minutes", wav(2, 0, 99), nil)
	if r.status != 429 || r.code() != "too_many_queued_reports" {
		t.Errorf("upload past 200 pending reports = %d %s, want 429 too_many_queued_reports", r.status, r.code())
	}
	if r := h.upload(ownerKey, "a.wav", "reports=summary,action-items", wav(2, 0, 98), nil); r.status != 201 {
		t.Errorf("upload reaching exactly 200 pending = %d %s", r.status, r.body)
	}
}
