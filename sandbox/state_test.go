package sandbox

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStateMachine(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.TimeScale = 0.01 })
	// One hour of recording (byte rate 1: 3600 bytes) takes 4 min × 0.01 = 2.4 s.
	id := h.mustUpload(ownerKey, "hour.wav", "reports=summary", wav(3600, 1, 1), nil)
	seen := map[string]time.Time{}
	start := time.Now()
	var rec map[string]any
	for time.Since(start) < 15*time.Second {
		rec = h.record(ownerKey, id)
		st := rec["status"].(string)
		if _, ok := seen[st]; !ok {
			seen[st] = time.Now()
		}
		if terminal(rec) {
			break
		}
		if st == "completed" || st == "processing" || st == "queued" {
			rep := rec["prompt_results"].([]any)[0].(map[string]any)
			if st != "completed" && rep["status"] != "queued" {
				t.Errorf("report is %v before the transcript is ready", rep["status"])
			}
			if st != "completed" && (rec["text"] != nil || len(rec["segments"].([]any)) != 0) {
				t.Errorf("text or segments present in status %s", st)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, st := range []string{"processing", "completed"} {
		if _, ok := seen[st]; !ok {
			t.Errorf("status %s never seen; saw %v", st, seen)
		}
	}
	took := seen["completed"].Sub(start)
	if took < 2*time.Second {
		t.Errorf("a one-hour file at time scale 0.01 completed after %v, want about 2.4 s", took)
	}
	rep := rec["prompt_results"].([]any)[0].(map[string]any)
	if rep["status"] != "completed" || rep["text"] == nil || rep["completed_at"] == nil {
		t.Errorf("report after completion = %v", rep)
	}
	if d := rec["duration_seconds"].(float64); d != 3600 {
		t.Errorf("duration_seconds = %v, want 3600", d)
	}
	// Minutes were reserved at processing start and kept.
	var ws struct {
		Balance struct {
			AvailableMinutes float64 `json:"available_minutes"`
		}
	}
	h.get(ownerKey, "/workspace").json(t, &ws)
	if ws.Balance.AvailableMinutes != 540 {
		t.Errorf("balance after a one-hour file = %v, want 540", ws.Balance.AvailableMinutes)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.TimeScale = 1 })
	var ids []string
	for i := range 4 {
		ids = append(ids, h.mustUpload(ownerKey, "f.wav", "", wav(2, 0, uint64(i)), nil))
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		counts := map[string]int{}
		for _, id := range ids {
			counts[h.record(ownerKey, id)["status"].(string)]++
		}
		if counts["processing"] > 2 {
			t.Fatalf("%d processing at once, want at most limits.concurrency = 2", counts["processing"])
		}
		if counts["processing"] == 2 && counts["queued"] == 2 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("never saw 2 processing and 2 queued")
}

func TestInsufficientBalanceAndRefunds(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.TimeScale = 0.001 })
	// Tight has 0.5 minutes: a 2-minute file ends insufficient_balance with the figures.
	id := h.mustUpload(tightKey, "long.wav", "reports=summary", wav(120, 10, 1), nil)
	rec := h.waitDone(tightKey, id)
	if rec["status"] != "insufficient_balance" || rec["required_minutes"] != 2.0 || rec["available_minutes"] != 0.5 {
		t.Errorf("2-minute file with 0.5 minutes = %v required %v available %v", rec["status"], rec["required_minutes"], rec["available_minutes"])
	}
	if rep := rec["prompt_results"].([]any)[0].(map[string]any); rep["status"] != "failed" {
		t.Errorf("report of an insufficient_balance transcription = %v, want failed", rep["status"])
	}
	if r := h.do(req{method: "POST", path: "/transcriptions/" + id + "/reports", key: tightKey, jsonBody: map[string]any{"reports": []string{"summary"}}}); r.status != 409 {
		t.Errorf("reports for an insufficient_balance transcription = %d, want 409", r.status)
	}
	// The file is not kept.
	entries, _ := os.ReadDir(h.srv.opts.MediaDir)
	if len(entries) != 0 {
		t.Errorf("media folder holds %d files after processing, want none", len(entries))
	}
	// Deleting a transcription in processing returns its reserved minutes.
	h2 := newHarness(t, func(o *Options) { o.TimeScale = 1 })
	id = h2.mustUpload(ownerKey, "ten.wav", "", wav(600, 2, 2), nil) // 10 minutes, 40 s processing
	deadline := time.Now().Add(5 * time.Second)
	for h2.record(ownerKey, id)["status"] != "processing" && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := balance(t, h2); got != 590 {
		t.Errorf("balance while a 10-minute file processes = %v, want 590", got)
	}
	if r := h2.do(req{method: "DELETE", path: "/transcriptions/" + id, key: ownerKey}); r.status != 204 {
		t.Fatalf("DELETE = %d %s", r.status, r.body)
	}
	if got := balance(t, h2); got != 600 {
		t.Errorf("balance after deleting it = %v, want 600", got)
	}
	if r := h2.get(ownerKey, "/transcriptions/"+id); r.status != 404 {
		t.Errorf("GET after DELETE = %d, want 404", r.status)
	}
	if r := h2.do(req{method: "DELETE", path: "/transcriptions/" + id, key: ownerKey}); r.status != 404 {
		t.Errorf("second DELETE = %d, want 404", r.status)
	}
	entries, _ = os.ReadDir(h2.srv.opts.MediaDir)
	if len(entries) != 0 {
		t.Errorf("media of a deleted transcription kept: %v", entries)
	}
}

func balance(t *testing.T, h *harness) float64 {
	t.Helper()
	var ws struct {
		Balance struct {
			AvailableMinutes float64 `json:"available_minutes"`
		}
	}
	h.get(ownerKey, "/workspace").json(t, &ws)
	return ws.Balance.AvailableMinutes
}

func TestFailures(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		file, code string
	}{
		{"corrupt.mp3", "FILE_CORRUPTED"},
		{"truncated.m4a", "FILE_CORRUPTED"},
		{"silent-video.mp4", "FILE_NO_AUDIO"},
	}
	for _, tc := range tests {
		b, err := os.ReadFile(filepath.Join("testdata/media", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		rec := h.waitDone(ownerKey, h.mustUpload(ownerKey, tc.file, "", b, nil))
		if rec["status"] != "failed" || rec["error_code"] != tc.code {
			t.Errorf("%s = %v %v, want failed %s", tc.file, rec["status"], rec["error_code"], tc.code)
		}
	}
	// Over the workspace's max_duration_hours (Tight: 1 hour) fails RECORDING_TOO_LONG, and so
	// does anything over 10 hours anywhere.
	setBalance(t, h, tightWSID, 1000)
	rec := h.waitDone(tightKey, h.mustUpload(tightKey, "long.wav", "", wav(3700, 1, 3), nil))
	if rec["error_code"] != "RECORDING_TOO_LONG" {
		t.Errorf("3700 s in a 1-hour workspace = %v, want RECORDING_TOO_LONG", rec["error_code"])
	}
	rec = h.waitDone(ownerKey, h.mustUpload(ownerKey, "long.wav", "", wav(36001, 1, 3), nil))
	if rec["error_code"] != "RECORDING_TOO_LONG" {
		t.Errorf("10 h 1 s = %v, want RECORDING_TOO_LONG", rec["error_code"])
	}
	if got := balance(t, h); got != 600 {
		t.Errorf("failed files charged minutes: balance %v, want 600", got)
	}
}

func TestPatchAuthor(t *testing.T) {
	h := newHarness(t)
	id := h.mustUpload(samKey, "a.wav", "project_id="+salesID, wav(2, 0, 1), nil)
	other := h.mustUpload(ownerKey, "b.wav", "", wav(2, 0, 2), nil)
	patch := func(key, id string, author any) *response {
		return h.do(req{method: "PATCH", path: "/transcriptions/" + id, key: key, jsonBody: map[string]any{"author": author}})
	}
	tests := []struct {
		name       string
		resp       *response
		status     int
		code       string
		wantAuthor string
	}{
		{"by email", patch(samKey, id, "email:RITA@acme.test"), 200, "", ritaID},
		{"by user id", patch(samKey, id, "user:"+ownerID), 200, "", ownerID},
		{"null returns to creator", patch(samKey, id, nil), 200, "", samID},
		{"external form not listed", patch(samKey, id, "external:zoom:u-1"), 422, "unsupported_author_type", ""},
		{"garbage", patch(samKey, id, "nobody"), 422, "invalid_author", ""},
		{"inactive", patch(samKey, id, "user:"+goneID), 422, "author_not_member", ""},
		{"no right on others' transcription", patch(ritaKey, other, "email:rita@acme.test"), 403, "forbidden", ""},
		{"owner edits all", patch(ownerKey, id, "email:rita@acme.test"), 200, "", ritaID},
		{"unknown id", patch(ownerKey, "aaaaaaaa-0000-4000-8000-00000000ffff", nil), 404, "not_found", ""},
		{"other workspace", patch(otherKey, id, nil), 404, "not_found", ""},
	}
	for _, tc := range tests {
		if tc.resp.status != tc.status || tc.resp.code() != tc.code {
			t.Errorf("%s: PATCH = %d %q, want %d %q (%s)", tc.name, tc.resp.status, tc.resp.code(), tc.status, tc.code, tc.resp.body)
			continue
		}
		if tc.wantAuthor != "" {
			if got := tc.resp.m()["author"].(map[string]any)["id"]; got != tc.wantAuthor {
				t.Errorf("%s: author = %v, want %s", tc.name, got, tc.wantAuthor)
			}
		}
	}
	// Rita, now author of id, may edit it (her own), and an editor of its project may too.
	if r := patch(ritaKey, id, "email:sam@acme.test"); r.status != 200 {
		t.Errorf("author reassigning her own transcription = %d", r.status)
	}
}

func TestDeletePermissionsAndLock(t *testing.T) {
	h := newHarness(t)
	id := h.mustUpload(ownerKey, "a.wav", "", wav(2, 0, 1), nil)
	if r := h.do(req{method: "DELETE", path: "/transcriptions/" + id, key: ritaKey}); r.status != 403 {
		t.Errorf("member deleting the owner's transcription = %d, want 403", r.status)
	}
	if r := h.do(req{method: "DELETE", path: "/transcriptions/" + id, key: otherKey}); r.status != 404 {
		t.Errorf("delete from another workspace = %d, want 404", r.status)
	}
	// A locked preview answers 403 transcription_locked.
	h.do(req{method: "POST", path: h.ts.URL + ControlPath + "/transcriptions/" + id + "/lock"})
	if r := h.get(ownerKey, "/transcriptions/"+id); r.status != 403 || r.code() != "transcription_locked" {
		t.Errorf("GET locked = %d %s, want 403 transcription_locked", r.status, r.code())
	}
}

func TestCrossWorkspaceNotFoundIsIdentical(t *testing.T) {
	h := newHarness(t)
	id := h.mustUpload(ownerKey, "a.wav", "", wav(2, 0, 1), nil)
	foreign := h.get(otherKey, "/transcriptions/"+id)
	missing := h.get(otherKey, "/transcriptions/aaaaaaaa-0000-4000-8000-00000000ffff")
	if foreign.status != 404 || string(foreign.body) != string(missing.body) {
		t.Errorf("foreign id = %d %s; missing id = %d %s: want identical 404s", foreign.status, foreign.body, missing.status, missing.body)
	}
	for _, path := range []string{"/export", "/reports"} {
		method := "GET"
		var body any
		if path == "/reports" {
			method, body = "POST", map[string]any{"reports": []string{"summary"}}
		}
		if r := h.do(req{method: method, path: "/transcriptions/" + id + path, key: otherKey, jsonBody: body}); r.status != 404 {
			t.Errorf("%s %s from another workspace = %d, want 404", method, path, r.status)
		}
	}
}

func TestDeterministicTranscripts(t *testing.T) {
	h := newHarness(t)
	a1 := h.waitDone(ownerKey, h.mustUpload(ownerKey, "a.wav", "ai_metadata=true&speakers_count=3", wav(90, 0, 1), nil))
	a2 := h.waitDone(ownerKey, h.mustUpload(ownerKey, "a.wav", "ai_metadata=true&speakers_count=3", wav(90, 0, 1), nil))
	b := h.waitDone(ownerKey, h.mustUpload(ownerKey, "a.wav", "ai_metadata=true&speakers_count=3", wav(90, 0, 2), nil))
	if a1["text"] != a2["text"] || a1["title"] != a2["title"] {
		t.Errorf("the same file gave different transcripts")
	}
	if a1["text"] == b["text"] {
		t.Errorf("different files gave the same transcript")
	}
	if n := len(a1["speakers"].([]any)); n != 3 {
		t.Errorf("speakers = %d, want speakers_count 3", n)
	}
	segs := a1["segments"].([]any)
	prevEnd := 0.0
	for i, s := range segs {
		seg := s.(map[string]any)
		if int(seg["id"].(float64)) != i+1 || seg["start"].(float64) != prevEnd || seg["end"].(float64) <= seg["start"].(float64) {
			t.Fatalf("segment %d = %v: ids must count from 1 and times increase without gaps", i, seg)
		}
		prevEnd = seg["end"].(float64)
	}
	if math.Abs(prevEnd-90) > 0.01 {
		t.Errorf("segments end at %v, want the duration 90", prevEnd)
	}
	lines := strings.Split(a1["text"].(string), "\n")
	if len(lines) != len(segs) || !strings.HasPrefix(lines[0], "[00:00] ") {
		t.Errorf("text has %d lines for %d segments; first %q", len(lines), len(segs), lines[0])
	}
	if a1["summary"] == nil || len(a1["topics"].([]any)) == 0 || a1["title"] == "a.wav" {
		t.Errorf("ai_metadata gave no title/summary/topics: %v %v %v", a1["title"], a1["summary"], a1["topics"])
	}
	// Without the AI layer: file name as title, generic speaker labels, no summary or topics.
	plain := h.waitDone(ownerKey, h.mustUpload(ownerKey, "plain.wav", "language=fr", wav(30, 0, 3), nil))
	if plain["title"] != "plain.wav" || plain["summary"] != nil || plain["topics"] != nil || plain["language"] != "fr" {
		t.Errorf("plain = title %v summary %v topics %v language %v", plain["title"], plain["summary"], plain["topics"], plain["language"])
	}
	seg := plain["segments"].([]any)[0].(map[string]any)
	if seg["speaker_id"] == nil || seg["speaker_name"] != nil || !strings.Contains(plain["text"].(string), "Speaker 1:") {
		t.Errorf("plain segment = %v", seg)
	}
	nod := h.waitDone(ownerKey, h.mustUpload(ownerKey, "nod.wav", "diarize=false", wav(30, 0, 4), nil))
	if seg := nod["segments"].([]any)[0].(map[string]any); seg["speaker_id"] != nil || len(nod["speakers"].([]any)) != 0 {
		t.Errorf("diarize=false segment = %v speakers %v", seg, nod["speakers"])
	}
	if nod["language"] != "en" {
		t.Errorf("detected language = %v, want en", nod["language"])
	}
}
