package sandbox

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// stepAtRecordRead makes the processor take one step, with the clock a minute on so that what
// is processing is due, the first time a request has read a transcription's row: the moment a
// reader that reads in several steps sees the state change under it. A reader that reads at
// one moment keeps the step out until it is done, so the hook waits for the step at most
// wait. The returned func removes the hook and waits for the step.
func stepAtRecordRead(t *testing.T, h *harness, wait time.Duration) (finish func()) {
	t.Helper()
	var once sync.Once
	var fired atomic.Bool
	done := make(chan struct{})
	hook := func() {
		once.Do(func() {
			fired.Store(true)
			h.clock.Advance(time.Minute)
			go func() {
				defer close(done)
				if _, err := h.srv.advance(context.Background()); err != nil {
					t.Errorf("advance: %v", err)
				}
			}()
			select {
			case <-done:
			case <-time.After(wait):
			}
		})
	}
	h.srv.readHook.Store(&hook)
	return func() {
		t.Helper()
		h.srv.readHook.Store(nil)
		if !fired.Load() {
			t.Errorf("no transcription row was read")
			return
		}
		<-done
	}
}

// waitStatus polls id until it has status.
func waitStatus(t *testing.T, h *harness, id, status string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for h.record(ownerKey, id)["status"] != status {
		if time.Now().After(deadline) {
			t.Fatalf("transcription %s never reached %s", id, status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// oneMoment reports what in rec could not have been true at one moment, or "".
func oneMoment(rec map[string]any) string {
	st, _ := rec["status"].(string)
	reps, _ := rec["prompt_results"].([]any)
	for _, rep := range reps {
		if rs := rep.(map[string]any)["status"]; st != "completed" && rs != "queued" {
			return "transcription " + st + " with a report " + rs.(string)
		}
	}
	if (st == "completed") != (rec["text"] != nil) {
		return fmt.Sprintf("transcription %s with text %v", st, rec["text"] != nil)
	}
	return ""
}

func TestRecordAndReportsReadAtOneMoment(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.TimeScale = 1 }) // nothing finishes by itself
	tests := []struct {
		name  string
		fetch func(id string) map[string]any
	}{
		{"GET /transcriptions/{id}", func(id string) map[string]any { return h.record(ownerKey, id) }},
		{"GET /transcriptions/{id}/export?format=json", func(id string) map[string]any {
			var rec map[string]any
			h.get(ownerKey, "/transcriptions/"+id+"/export?format=json").json(t, &rec)
			return rec
		}},
		{"POST /transcriptions/export json", func(id string) map[string]any {
			r := h.do(req{method: "POST", path: "/transcriptions/export", key: ownerKey, jsonBody: map[string]any{"ids": []string{id}, "format": "json"}})
			zr, err := zip.NewReader(bytes.NewReader(r.body), int64(len(r.body)))
			if err != nil || len(zr.File) != 1 {
				t.Fatalf("bulk export = %d %v (%d files)", r.status, err, len(zr.File))
			}
			f, _ := zr.File[0].Open()
			defer f.Close()
			var rec map[string]any
			if err := json.NewDecoder(io.Reader(f)).Decode(&rec); err != nil {
				t.Fatal(err)
			}
			return rec
		}},
	}
	for i, tc := range tests {
		id := h.mustUpload(ownerKey, "a.wav", "reports=summary", wav(2, 0, uint64(i)), nil)
		waitStatus(t, h, id, "processing")
		finish := stepAtRecordRead(t, h, 500*time.Millisecond)
		rec := tc.fetch(id)
		finish()
		if bad := oneMoment(rec); bad != "" {
			t.Errorf("%s(transcription becoming completed while read) = %s, want the record and its reports of one moment", tc.name, bad)
		}
	}
}

func TestReportRequestAtOneMoment(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.TimeScale = 1 })
	// A file that fails when its processing ends; it ends while the report request is handled.
	id := h.mustUpload(ownerKey, "bad.mp3", "", make([]byte, 2000), nil)
	waitStatus(t, h, id, "processing")
	// The request reads the row before its transaction: the step always gets in there.
	finish := stepAtRecordRead(t, h, 10*time.Second)
	r := requestReports(h, ownerKey, id, "summary")
	finish()
	if r.status != 409 || r.code() != "transcription_failed" {
		t.Errorf("reports(transcription failing while the request is handled) = %d %s, want 409 transcription_failed", r.status, r.code())
	}
	// Nothing is left waiting for a transcript that will never come.
	if rec := h.record(ownerKey, id); rec["status"] != "failed" || !terminal(rec) {
		t.Errorf("transcription after the request = %v with reports %v, want failed with nothing waiting", rec["status"], rec["prompt_results"])
	}
}

func TestDeleteFillsTheFreedSlotAtOnce(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.TimeScale = 1 })
	// With the processor stopped, only the requests themselves move state: what a client sees
	// right after its DELETE is what that DELETE committed.
	h.srv.stop()
	<-h.srv.done
	step := func() {
		if _, err := h.srv.advance(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	// Tight processes one file at a time.
	setBalance(t, h, tightWSID, 100)
	first := h.mustUpload(tightKey, "0.wav", "", wav(2, 0, 1), nil)
	step()
	next := h.mustUpload(tightKey, "1.wav", "", wav(2, 0, 2), nil)
	if got := h.record(tightKey, first)["status"]; got != "processing" {
		t.Fatalf("first file = %v, want processing", got)
	}
	if r := h.do(req{method: "DELETE", path: "/transcriptions/" + first, key: tightKey}); r.status != 204 {
		t.Fatalf("DELETE = %d %s", r.status, r.body)
	}
	if got := h.record(tightKey, next)["status"]; got != "processing" {
		t.Errorf("next file right after DELETE of the processing one = %v, want processing (the slot is free)", got)
	}
}
