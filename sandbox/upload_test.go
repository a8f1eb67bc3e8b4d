package sandbox

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawUpload opens a connection, sends the request head of an upload promising length bytes and
// then prefix of the body, and leaves the connection open for the test to finish or drop.
func rawUpload(t *testing.T, h *harness, key, name string, length int, prefix []byte, extra map[string]string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", h.ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "POST %s/transcriptions HTTP/1.1\r\nHost: sandbox\r\nAuthorization: Bearer %s\r\n", BasePath, key)
	fmt.Fprintf(&b, "Content-Disposition: attachment; filename=%q\r\nContent-Length: %d\r\n", name, length)
	for k, v := range extra {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n")
	if _, err := conn.Write(append([]byte(b.String()), prefix...)); err != nil {
		t.Fatal(err)
	}
	return conn
}

// readStatus reads the status line and headers of the answer on conn.
func readStatus(t *testing.T, conn net.Conn) (*http.Response, string) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 4096)
	n, _ := resp.Body.Read(buf)
	sb.Write(buf[:n])
	return resp, sb.String()
}

func TestUploadValidation(t *testing.T) {
	h := newHarness(t)
	good := wav(3, 0, 1)
	tests := []struct {
		name    string
		key     string
		file    string
		query   string
		body    []byte
		headers map[string]string
		status  int
		code    string
		slug    string // detail.slug for prompt_not_found
	}{
		{name: "filename query", query: "filename=a.wav", status: 400, code: "filename_required"},
		{name: "no disposition", headers: map[string]string{"Content-Disposition": ""}, status: 400, code: "filename_required"},
		{name: "disposition without name", headers: map[string]string{"Content-Disposition": "attachment"}, status: 400, code: "filename_required"},
		{name: "unsupported extension", file: "notes.txt", status: 400, code: "unsupported_file_format"},
		{name: "no extension", file: "recording", status: 400, code: "unsupported_file_format"},
		{name: "too small", body: make([]byte, 1023), status: 400, code: "file_too_small"},
		{name: "format before size", file: "a.pdf", body: make([]byte, 10), status: 400, code: "unsupported_file_format"},
		{name: "language", query: "language=xx", status: 422, code: "unsupported_language"},
		{name: "speakers 0", query: "speakers_count=0", status: 422, code: "invalid_speakers_count"},
		{name: "speakers 21", query: "speakers_count=21", status: 422, code: "invalid_speakers_count"},
		{name: "diarize not bool", query: "diarize=maybe", status: 422, code: "invalid_parameter"},
		{name: "unknown project", query: "project_id=bbbbbbbb-0000-4000-8000-00000000ffff", status: 422, code: "project_not_found"},
		{name: "project of others", key: ritaKey, query: "project_id=" + salesID, status: 422, code: "project_not_found"},
		{name: "too many reports", query: "reports=summary,action-items,meeting-minutes,follow-up-email", status: 422, code: "too_many_reports"},
		{name: "unknown slug", query: "reports=summary,nope", status: 422, code: "prompt_not_found", slug: "nope"},
		{name: "draft slug", query: "reports=my-draft", status: 422, code: "prompt_not_found", slug: "my-draft"},
		{name: "others' personal slug", query: "reports=sam-private", status: 422, code: "prompt_not_found", slug: "sam-private"},
		{name: "external id long", headers: map[string]string{"X-External-Id": strings.Repeat("a", 129)}, status: 422, code: "external_id_too_long"},
		{name: "external id control", headers: map[string]string{"X-External-Id": "a\tb"}, status: 422, code: "external_id_invalid"},
		{name: "external id non-ASCII", headers: map[string]string{"X-External-Id": "caf\u00e9"}, status: 422, code: "external_id_invalid"},
		{name: "external id token", headers: map[string]string{"X-External-Id": "mk_live_abcdef"}, status: 422, code: "external_id_invalid"},
		{name: "metadata not json", headers: map[string]string{"X-Metadata": "{oops"}, status: 422, code: "metadata_invalid_json"},
		{name: "metadata array", headers: map[string]string{"X-Metadata": "[1]"}, status: 422, code: "metadata_not_object"},
		{name: "metadata too large", headers: map[string]string{"X-Metadata": `{"a":"` + strings.Repeat("x", 4100) + `"}`}, status: 422, code: "metadata_too_large"},
		{name: "metadata key long", headers: map[string]string{"X-Metadata": `{"` + strings.Repeat("k", 65) + `":1}`}, status: 422, code: "metadata_key_too_long"},
		{name: "metadata too deep", headers: map[string]string{"X-Metadata": `{"a":{"b":{"c":{"d":1}}}}`}, status: 422, code: "metadata_too_deep"},
		{name: "metadata nested array", headers: map[string]string{"X-Metadata": `{"a":[[1]]}`}, status: 422, code: "metadata_value_invalid"},
		{name: "metadata object in array", headers: map[string]string{"X-Metadata": `{"a":[{"b":1}]}`}, status: 422, code: "metadata_value_invalid"},
		{name: "metadata secret", headers: map[string]string{"X-Metadata": `{"token":"whsec_abcdefgh"}`}, status: 422, code: "metadata_value_invalid"},
		{name: "author no colon", headers: map[string]string{"X-Author": "sam"}, status: 422, code: "invalid_author"},
		{name: "author bad uuid", headers: map[string]string{"X-Author": "user:42"}, status: 422, code: "invalid_author"},
		{name: "author type", headers: map[string]string{"X-Author": "slack:U1"}, status: 422, code: "unsupported_author_type"},
		{name: "author unknown email", headers: map[string]string{"X-Author": "email:nobody@acme.test"}, status: 422, code: "author_not_member"},
		{name: "author inactive", headers: map[string]string{"X-Author": "user:" + goneID}, status: 422, code: "author_not_member"},
		{name: "author other workspace", headers: map[string]string{"X-Author": "email:boss@other.test"}, status: 422, code: "author_not_member"},
		{name: "author unknown identity", headers: map[string]string{"X-Author": "external:zoom:u-2"}, status: 422, code: "author_not_member"},
		{name: "ok minimal", status: 201},
		{name: "ok metadata depth 3", headers: map[string]string{"X-Metadata": `{"a":{"b":{"c":[1,"x",true,null]}}}`}, status: 201},
		{name: "ok author email any case", headers: map[string]string{"X-Author": "email:SAM@acme.test"}, status: 201},
		{name: "ok author identity", headers: map[string]string{"X-Author": "external:ZOOM:u-1"}, status: 201},
		{name: "ok author outside project", query: "project_id=" + salesID, headers: map[string]string{"X-Author": "user:" + ritaID}, status: 201},
		{name: "ok all options", query: "language=de&diarize=false&speakers_count=2&ai_metadata=true&reports=summary,deal-notes", status: 201},
	}
	for _, tc := range tests {
		key, file, body := ownerKey, "meeting.wav", good
		if tc.key != "" {
			key = tc.key
		}
		if tc.file != "" {
			file = tc.file
		}
		if tc.body != nil {
			body = tc.body
		}
		r := h.upload(key, file, tc.query, body, tc.headers)
		if r.status != tc.status || r.code() != tc.code {
			t.Errorf("%s: upload = %d %q, want %d %q (%s)", tc.name, r.status, r.code(), tc.status, tc.code, r.body)
			continue
		}
		if tc.slug != "" {
			if got := r.m()["detail"].(map[string]any)["slug"]; got != tc.slug {
				t.Errorf("%s: detail.slug = %v, want %s", tc.name, got, tc.slug)
			}
		}
	}
	// Nothing that was refused left a record or charged a minute.
	var n int
	h.srv.db.QueryRow(`SELECT COUNT(*) FROM transcriptions`).Scan(&n)
	if n != 6 {
		t.Errorf("%d transcriptions stored, want the 6 accepted ones", n)
	}
}

func TestUploadLengthChecks(t *testing.T) {
	h := newHarness(t)
	// 413 from Content-Length alone: no body byte is sent.
	conn := rawUpload(t, h, ownerKey, "big.mp4", 2<<30+1, nil, nil)
	resp, body := readStatus(t, conn)
	conn.Close()
	if resp.StatusCode != 413 || !strings.Contains(body, "file_size_limit_exceeded") {
		t.Errorf("Content-Length over 2 GB = %d %s, want 413 file_size_limit_exceeded", resp.StatusCode, body)
	}
	// 411 without Content-Length (a chunked body).
	conn, err := net.Dial("tcp", h.ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST %s/transcriptions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Disposition: attachment; filename=a.wav\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", BasePath, ownerKey)
	resp, body = readStatus(t, conn)
	conn.Close()
	if resp.StatusCode != 411 || !strings.Contains(body, "length_required") {
		t.Errorf("chunked upload = %d %s, want 411 length_required", resp.StatusCode, body)
	}
	// The workspace's own max_file_size_mb applies too.
	h2 := newHarness(t, func(o *Options) { o.Seed.Workspaces[0].Limits.MaxFileSizeMB = 1 })
	if r := h2.upload(ownerKey, "a.wav", "", wav(200, 8000, 1), nil); r.status != 413 {
		t.Errorf("upload over the workspace's 1 MB limit = %d, want 413", r.status)
	}
}

func TestUploadNonASCIIFilename(t *testing.T) {
	h := newHarness(t)
	name := "Réunion équipe 会议.wav"
	r := h.upload(ownerKey, "", "", wav(2, 0, 9), map[string]string{
		"Content-Disposition": "attachment; filename*=UTF-8''R%C3%A9union%20%C3%A9quipe%20%E4%BC%9A%E8%AE%AE.wav"})
	if r.status != 201 {
		t.Fatalf("RFC 5987 upload = %d %s", r.status, r.body)
	}
	var u uploadResponse
	r.json(t, &u)
	if got := h.record(ownerKey, u.UUID)["title"]; got != name {
		t.Errorf("title = %q, want %q", got, name)
	}
}

func TestUploadIncompleteAndStall(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.StallTimeout = 300 * time.Millisecond })
	file := wav(3, 0, 4)
	// Interrupted mid-body: the record fails as UPLOAD_INCOMPLETE and the key is free again.
	conn := rawUpload(t, h, ownerKey, "cut.wav", len(file), file[:5000], map[string]string{"Idempotency-Key": "k-cut", "X-External-Id": "cut-1"})
	time.Sleep(50 * time.Millisecond)
	conn.Close()
	var list struct {
		Items []map[string]any
		Total int
	}
	deadline := time.Now().Add(5 * time.Second)
	for list.Total == 0 && time.Now().Before(deadline) {
		h.get(ownerKey, "/transcriptions?status=failed&external_id=cut-1").json(t, &list)
		time.Sleep(10 * time.Millisecond)
	}
	if list.Total != 1 {
		t.Fatalf("incomplete uploads listed = %d, want 1", list.Total)
	}
	if rec := h.record(ownerKey, list.Items[0]["id"].(string)); rec["error_code"] != "UPLOAD_INCOMPLETE" {
		t.Errorf("error_code = %v, want UPLOAD_INCOMPLETE", rec["error_code"])
	}
	r := h.upload(ownerKey, "cut.wav", "", file, map[string]string{"Idempotency-Key": "k-cut", "X-External-Id": "cut-1"})
	if r.status != 201 {
		t.Errorf("retry after an interrupted upload = %d %s, want 201", r.status, r.body)
	}
	// A stalled upload gets 408 upload_timeout.
	conn = rawUpload(t, h, ownerKey, "stall.wav", len(file), file[:2000], nil)
	resp, body := readStatus(t, conn)
	conn.Close()
	if resp.StatusCode != 408 || !strings.Contains(body, "upload_timeout") {
		t.Errorf("stalled upload = %d %s, want 408 upload_timeout", resp.StatusCode, body)
	}
}

func TestIdempotency(t *testing.T) {
	h := newHarness(t)
	file := wav(60, 0, 5) // one minute
	hdr := map[string]string{"Idempotency-Key": "key-1", "X-External-Id": "idem-1"}
	first := h.upload(ownerKey, "a.wav", "reports=summary", file, hdr)
	if first.status != 201 {
		t.Fatalf("first upload = %d %s", first.status, first.body)
	}
	var u1, u2 uploadResponse
	first.json(t, &u1)
	again := h.upload(ownerKey, "a.wav", "reports=summary", file, hdr)
	again.json(t, &u2)
	if again.status != 200 || u2.UUID != u1.UUID || len(u2.Reports) != 1 || u2.Reports[0].ID != u1.Reports[0].ID {
		t.Errorf("retry after success = %d %+v, want 200 with the original %+v", again.status, u2, u1)
	}
	h.waitDone(ownerKey, u1.UUID)
	var ws struct {
		Balance struct {
			AvailableMinutes float64 `json:"available_minutes"`
		}
	}
	h.get(ownerKey, "/workspace").json(t, &ws)
	if ws.Balance.AvailableMinutes != 599 {
		t.Errorf("balance after one 1-minute file uploaded twice = %v, want 599", ws.Balance.AvailableMinutes)
	}
	// The same key with another file is refused, not silently replayed.
	if r := h.upload(ownerKey, "b.wav", "", wav(2, 0, 6), map[string]string{"Idempotency-Key": "key-1"}); r.status != 422 || r.code() != "idempotency_key_reused" {
		t.Errorf("key reused for another file = %d %s", r.status, r.code())
	}
	// Keys are per API key: another key may use the same value.
	if r := h.upload(samKey, "a.wav", "", file, hdr); r.status != 201 {
		t.Errorf("same Idempotency-Key from another key = %d, want 201", r.status)
	}
	// In flight: a second request with the key gets 409 and Retry-After.
	big := wav(10, 0, 7)
	conn := rawUpload(t, h, ownerKey, "c.wav", len(big), big[:1000], map[string]string{"Idempotency-Key": "key-2"})
	waitUploads(t, h, 1)
	r := h.upload(ownerKey, "c.wav", "", big, map[string]string{"Idempotency-Key": "key-2"})
	if r.status != 409 || r.code() != "idempotency_conflict" || r.header.Get("Retry-After") == "" {
		t.Errorf("same key in flight = %d %s Retry-After %q, want 409 idempotency_conflict with Retry-After", r.status, r.code(), r.header.Get("Retry-After"))
	}
	conn.Write(big[1000:])
	resp, body := readStatus(t, conn)
	conn.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("in-flight upload finished with %d %s", resp.StatusCode, body)
	}
	if r := h.upload(ownerKey, "c.wav", "", big, map[string]string{"Idempotency-Key": "key-2"}); r.status != 200 {
		t.Errorf("after the in-flight upload succeeded = %d, want 200", r.status)
	}
	// Failures are forgotten: a 402 leaves the key free.
	setBalance(t, h, acmeID, 0)
	if r := h.upload(ownerKey, "d.wav", "", wav(2, 0, 8), map[string]string{"Idempotency-Key": "key-3"}); r.status != 402 || r.code() != "insufficient_balance" {
		t.Fatalf("upload with no minutes = %d %s, want 402 insufficient_balance", r.status, r.code())
	}
	setBalance(t, h, acmeID, 100)
	if r := h.upload(ownerKey, "d.wav", "", wav(2, 0, 8), map[string]string{"Idempotency-Key": "key-3"}); r.status != 201 {
		t.Errorf("retry after a failed attempt = %d %s, want 201", r.status, r.body)
	}
	// Success is remembered for 24 hours only.
	h.clock.Advance(24*time.Hour + time.Minute)
	var u3 uploadResponse
	r = h.upload(ownerKey, "a.wav", "reports=summary", file, hdr)
	r.json(t, &u3)
	if r.status != 201 || u3.UUID == u1.UUID {
		t.Errorf("same key after 24 h = %d %s, want 201 with a new uuid", r.status, u3.UUID)
	}
}

// waitUploads waits until n uploads are receiving their body.
func waitUploads(t *testing.T, h *harness, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		h.srv.uploads.mu.Lock()
		got := 0
		for _, c := range h.srv.uploads.byWS {
			got += c
		}
		h.srv.uploads.mu.Unlock()
		if got >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("fewer than %d uploads in progress", n)
}

func setBalance(t *testing.T, h *harness, ws string, minutes float64) {
	t.Helper()
	r := h.do(req{method: "PUT", path: h.ts.URL + ControlPath + "/workspaces/" + ws + "/balance", jsonBody: map[string]float64{"available_minutes": minutes}})
	if r.status != 200 {
		t.Fatalf("set balance = %d %s", r.status, r.body)
	}
}

func TestSimultaneousUploadCaps(t *testing.T) {
	h := newHarness(t)
	file := wav(3, 0, 1)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range 10 {
		conns = append(conns, rawUpload(t, h, ownerKey, fmt.Sprintf("%d.wav", i), len(file), file[:100], nil))
	}
	waitUploads(t, h, 10)
	r := h.upload(ownerKey, "x.wav", "", file, nil)
	if r.status != 429 || r.code() != "too_many_concurrent_uploads" || r.header.Get("Retry-After") == "" {
		t.Errorf("11th simultaneous upload of one key = %d %s, want 429 too_many_concurrent_uploads", r.status, r.code())
	}
	for i := range 6 {
		conns = append(conns, rawUpload(t, h, samKey, fmt.Sprintf("s%d.wav", i), len(file), file[:100], nil))
	}
	waitUploads(t, h, 16)
	if r := h.upload(ritaKey, "x.wav", "", file, nil); r.status != 429 || r.code() != "too_many_concurrent_uploads" {
		t.Errorf("17th simultaneous upload of the workspace = %d %s, want 429", r.status, r.code())
	}
	// Another workspace is not affected.
	if r := h.upload(otherKey, "x.wav", "", file, nil); r.status != 201 {
		t.Errorf("upload in another workspace = %d, want 201", r.status)
	}
}

func TestQueueAndDailyCaps(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.TimeScale = 1 })
	// Tight: concurrency 1, at most 3 queued, 6 uploads a day.
	first := h.mustUpload(tightKey, "0.wav", "", wav(2, 0, 100), nil)
	deadline := time.Now().Add(5 * time.Second)
	for h.record(tightKey, first)["status"] != "processing" && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	for i := 1; i <= 3; i++ {
		h.mustUpload(tightKey, fmt.Sprintf("%d.wav", i), "", wav(2, 0, uint64(100+i)), nil)
	}
	r := h.upload(tightKey, "4.wav", "", wav(2, 0, 104), nil)
	if r.status != 429 || r.code() != "too_many_queued_files" {
		t.Errorf("4th queued file = %d %s, want 429 too_many_queued_files", r.status, r.code())
	}
	h.do(req{method: "DELETE", path: "/transcriptions/" + first, key: tightKey})
	h.mustUpload(tightKey, "5.wav", "", wav(2, 0, 105), nil)
	// Six created today (one deleted still counts): the daily cap.
	if _, err := h.srv.db.Exec(`UPDATE transcriptions SET status = 'completed' WHERE workspace_id = ?`, tightWSID); err != nil {
		t.Fatal(err)
	}
	h.mustUpload(tightKey, "6.wav", "", wav(2, 0, 106), nil)
	r = h.upload(tightKey, "7.wav", "", wav(2, 0, 107), nil)
	if r.status != 429 || r.code() != "upload_quota_exceeded" || r.header.Get("Retry-After") == "" {
		t.Errorf("upload over the daily cap = %d %s, want 429 upload_quota_exceeded with Retry-After", r.status, r.code())
	}
}
