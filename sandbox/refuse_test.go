package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// streamedAnswer is what a client saw while its upload body was still unfinished.
type streamedAnswer struct {
	status int
	code   string
	close  bool // the server announced Connection: close
	err    error
}

// uploadStreaming sends an upload whose body promises declared bytes, writes 16 KB of them and
// then blocks, as a client streaming a large file does. It returns the answer the client got
// while the body was still unfinished; after 3 seconds without one the body fails and so does
// the upload.
func uploadStreaming(t *testing.T, h *harness, key, query string, headers map[string]string, declared int64) streamedAnswer {
	t.Helper()
	pr, pw := io.Pipe()
	defer pw.CloseWithError(errors.New("upload over"))
	go pw.Write(make([]byte, 16<<10))
	var timedOut atomic.Bool
	timer := time.AfterFunc(3*time.Second, func() {
		timedOut.Store(true)
		pw.CloseWithError(errors.New("no answer within 3 s while the body was unfinished"))
	})
	defer timer.Stop()
	url := h.base + "/transcriptions"
	if query != "" {
		url += "?" + query
	}
	rq, err := http.NewRequest("POST", url, pr)
	if err != nil {
		t.Fatal(err)
	}
	rq.ContentLength = declared
	rq.Header.Set("Content-Disposition", "attachment; filename=big.wav")
	if key != "" {
		rq.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range headers {
		rq.Header.Set(k, v)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(rq)
	if err != nil {
		return streamedAnswer{err: err}
	}
	defer resp.Body.Close()
	var e apiError
	b, err := io.ReadAll(resp.Body)
	if err == nil {
		err = json.Unmarshal(b, &e)
	}
	if timedOut.Load() {
		err = errors.New("the answer came only after the body failed")
	}
	return streamedAnswer{status: resp.StatusCode, code: e.Code, close: resp.Close, err: err}
}

func TestUploadRefusedBeforeBody(t *testing.T) {
	h := newHarness(t)
	// A finished upload whose Idempotency-Key a streaming retry then replays.
	h.mustUpload(ownerKey, "done.wav", "", wav(3, 0, 1), map[string]string{"Idempotency-Key": "refuse-done"})
	tests := []struct {
		name    string
		key     string
		query   string
		headers map[string]string
		status  int
		code    string
	}{
		{name: "unknown slug", query: "reports=nope", status: 422, code: "prompt_not_found"},
		{name: "too many slugs", query: "reports=summary,action-items,meeting-minutes,follow-up-email", status: 422, code: "too_many_reports"},
		{name: "bad metadata", headers: map[string]string{"X-Metadata": "{oops"}, status: 422, code: "metadata_invalid_json"},
		{name: "metadata too deep", headers: map[string]string{"X-Metadata": `{"a":{"b":{"c":{"d":1}}}}`}, status: 422, code: "metadata_too_deep"},
		{name: "external id too long", headers: map[string]string{"X-External-Id": strings.Repeat("a", 129)}, status: 422, code: "external_id_too_long"},
		{name: "bad author", headers: map[string]string{"X-Author": "sam"}, status: 422, code: "invalid_author"},
		{name: "author not a member", headers: map[string]string{"X-Author": "email:nobody@acme.test"}, status: 422, code: "author_not_member"},
		{name: "no filename", headers: map[string]string{"Content-Disposition": "attachment"}, status: 400, code: "filename_required"},
		{name: "filename query", query: "filename=a.wav", status: 400, code: "filename_required"},
		{name: "unsupported format", headers: map[string]string{"Content-Disposition": "attachment; filename=notes.txt"}, status: 400, code: "unsupported_file_format"},
		{name: "bad language", query: "language=xx", status: 422, code: "unsupported_language"},
		{name: "bad speakers_count", query: "speakers_count=99", status: 422, code: "invalid_speakers_count"},
		{name: "unknown project", query: "project_id=bbbbbbbb-0000-4000-8000-00000000ffff", status: 422, code: "project_not_found"},
		{name: "long idempotency key", headers: map[string]string{"Idempotency-Key": strings.Repeat("k", 256)}, status: 422, code: "idempotency_key_invalid"},
		// Authentication and rights come first, as the reference orders them.
		{name: "no key before a bad slug", key: "-", query: "reports=nope", status: 401, code: "missing_api_key"},
		{name: "invalid key before a bad slug", key: "mk_live_nope", query: "reports=nope", status: 401, code: "invalid_api_key"},
		{name: "key in URL before a bad slug", query: "reports=nope&api_key=x", status: 401, code: "api_key_in_url"},
		{name: "free plan before a bad slug", key: "mk_live_free_plan", query: "reports=nope", status: 403, code: "api_access_denied"},
		{name: "upload right before a bad slug", key: readKey, query: "reports=nope", status: 403, code: "upload_scope_required"},
		{name: "reports right before a bad slug", key: ritaKey, query: "reports=nope", status: 403, code: "reports_scope_required"},
		// Validation before the idempotent replay; the replay itself needs no body.
		{name: "bad slug with a used key", query: "reports=nope", headers: map[string]string{"Idempotency-Key": "refuse-done", "Content-Disposition": "attachment; filename=done.wav"}, status: 422, code: "prompt_not_found"},
		{name: "idempotent replay", headers: map[string]string{"Idempotency-Key": "refuse-done", "Content-Disposition": "attachment; filename=done.wav"}, status: 200},
	}
	for _, declared := range []int64{200 << 10, 64 << 20} { // under and over net/http's 256 KB drain
		for _, tc := range tests {
			key := ownerKey
			switch tc.key {
			case "-":
				key = ""
			case "":
			default:
				key = tc.key
			}
			length := declared
			if tc.status == 200 {
				length = int64(len(wav(3, 0, 1)))
			}
			got := uploadStreaming(t, h, key, tc.query, tc.headers, length)
			if got.err != nil || got.status != tc.status || got.code != tc.code {
				t.Errorf("upload(%s, %d bytes declared, 16 KB sent) = %d %q %v, want %d %q while the body is unfinished",
					tc.name, length, got.status, got.code, got.err, tc.status, tc.code)
			}
			if got.err == nil && !got.close {
				t.Errorf("upload(%s, %d bytes declared) = no Connection: close, want it (the body was not read)", tc.name, length)
			}
		}
	}
}

func TestUploadConflictWhileStreaming(t *testing.T) {
	h := newHarness(t)
	// The first upload with the key is receiving its body (it sent 16 KB of 200 KB); a second one
	// with the same key is refused at once, though it too is still streaming.
	conn := rawUpload(t, h, ownerKey, "big.wav", 200<<10, make([]byte, 16<<10), map[string]string{"Idempotency-Key": "refuse-k"})
	defer conn.Close()
	waitUploads(t, h, 1)
	got := uploadStreaming(t, h, ownerKey, "", map[string]string{"Idempotency-Key": "refuse-k"}, 200<<10)
	if got.err != nil || got.status != 409 || got.code != "idempotency_conflict" {
		t.Errorf("upload(same key in flight, streaming) = %d %q %v, want 409 idempotency_conflict", got.status, got.code, got.err)
	}
	// No minutes left: 402 before the body, too.
	setBalance(t, h, acmeID, 0)
	got = uploadStreaming(t, h, samKey, "", nil, 200<<10)
	if got.err != nil || got.status != 402 || got.code != "insufficient_balance" {
		t.Errorf("upload(no minutes, streaming) = %d %q %v, want 402 insufficient_balance", got.status, got.code, got.err)
	}
}

func TestUploadAcceptedKeepsConnection(t *testing.T) {
	h := newHarness(t)
	rq, err := http.NewRequest("POST", h.base+"/transcriptions", bytes.NewReader(wav(3, 0, 2)))
	if err != nil {
		t.Fatal(err)
	}
	rq.Header.Set("Authorization", "Bearer "+ownerKey)
	rq.Header.Set("Content-Disposition", "attachment; filename=a.wav")
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(rq)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 || resp.Close {
		t.Errorf("upload(whole body) = %d, Connection: close %v, want 201 on a kept connection", resp.StatusCode, resp.Close)
	}
}
