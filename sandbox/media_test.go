package sandbox

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/transcript-bridge/bridge/internal/media"
)

func TestProbeMedia(t *testing.T) {
	// Durations as ffprobe reports them (testdata/media/README of the shared fixtures).
	tests := []struct {
		file      string
		duration  float64
		mediaType string
		failure   string
	}{
		{"speech.wav", 18.666, "audio", ""},
		{"speech-8k.wav", 18.666, "audio", ""},
		{"speech.mp3", 18.756, "audio", ""},
		{"speech.m4a", 18.666, "audio", ""},
		{"speech.ogg", 18.666, "audio", ""},
		{"speech.opus", 18.672, "audio", ""},
		{"speech.flac", 18.666, "audio", ""},
		{"meeting.mp4", 18.7, "video", ""},
		{"meeting.mov", 18.7, "video", ""},
		{"meeting.webm", 18.716, "video", ""},
		{"silent-video.mp4", 0, "video", "FILE_NO_AUDIO"},
		{"truncated.m4a", 0, "audio", "FILE_CORRUPTED"},
		{"corrupt.mp3", 0, "audio", "FILE_CORRUPTED"},
	}
	for _, tc := range tests {
		path := filepath.Join("testdata/media", tc.file)
		got := probeMedia(context.Background(), path, media.Ext(tc.file))
		if got.failure != tc.failure {
			t.Errorf("probeMedia(%q) failure = %q, want %q", tc.file, got.failure, tc.failure)
			continue
		}
		if tc.failure == "" && math.Abs(got.duration-tc.duration) > 0.1 {
			t.Errorf("probeMedia(%q) duration = %.3f, want %.3f ± 0.1", tc.file, got.duration, tc.duration)
		}
		if got.mediaType != tc.mediaType && tc.failure == "" {
			t.Errorf("probeMedia(%q) media type = %q, want %q", tc.file, got.mediaType, tc.mediaType)
		}
	}
	// A file of a format parsed nowhere here falls back to ffprobe or a size estimate.
	dir := t.TempDir()
	p := filepath.Join(dir, "x.aac")
	if err := os.WriteFile(p, make([]byte, 16000), 0o644); err != nil {
		t.Fatal(err)
	}
	got := probeMedia(context.Background(), p, "aac")
	if _, err := exec.LookPath("ffprobe"); err == nil {
		if got.failure == "" { // ffprobe reads 16,000 zero bytes as no valid audio
			t.Errorf("probeMedia(zeros.aac) with ffprobe = %+v, want a failure", got)
		}
	} else if got.failure != "" || got.duration != 1 {
		t.Errorf("probeMedia(x.aac) without ffprobe = %+v, want the 128 kb/s estimate of 1 s", got)
	}
}

func TestSeedValidation(t *testing.T) {
	good := func() *Seed {
		s, err := LoadSeed("../configs/sandbox.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tests := []struct {
		name   string
		mutate func(*Seed)
		want   string
	}{
		{"no workspaces", func(s *Seed) { s.Workspaces = nil }, "workspaces: at least one"},
		{"bad plan", func(s *Seed) { s.Workspaces[0].Plan = "gold" }, `workspaces[0].plan: "gold"`},
		{"bad role", func(s *Seed) { s.Workspaces[0].Members[0].Role = "admin" }, "workspaces[0].members[0].role"},
		{"key of stranger", func(s *Seed) { s.Workspaces[0].Keys[0].Member = "x@y.z" }, "workspaces[0].keys[0].member"},
		{"unknown scope", func(s *Seed) { s.Workspaces[0].Keys[0].Scopes = []string{"admin"} }, `unknown scope "admin"`},
		{"builtin slug", func(s *Seed) { s.Workspaces[0].Prompts[0].Slug = "summary" }, "is a built-in slug"},
		{"bad identity", func(s *Seed) {
			s.Workspaces[0].Members[1].Identities = []SeedIdentity{{Provider: "Zo om", ExternalID: "x"}}
		}, "workspaces[0].members[1].identities[0]"},
	}
	for _, tc := range tests {
		s := good()
		tc.mutate(s)
		err := s.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate() = %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "seed.yaml")
	os.WriteFile(p, []byte("workspaces:\n  - name: A\n    balance: 5\n"), 0o644)
	if _, err := LoadSeed(p); err == nil || !strings.Contains(err.Error(), "balance") {
		t.Errorf("LoadSeed with an unknown key = %v, want an error naming it", err)
	}
}

func TestResetAndRestart(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	h := newHarness(t, func(o *Options) { o.DBPath = db })
	id := h.mustUpload(ownerKey, "a.wav", "", wav(2, 0, 1), nil)
	h.waitDone(ownerKey, id)
	h.ts.Close()
	h.srv.Close()
	// The state survives a restart on the same file.
	h2 := newHarness(t, func(o *Options) { o.DBPath = db })
	if r := h2.get(ownerKey, "/transcriptions/"+id); r.status != 200 {
		t.Fatalf("after restart GET = %d", r.status)
	}
	// Reset wipes it and applies the seed again.
	if r := h2.do(req{method: "POST", path: h2.ts.URL + ControlPath + "/reset"}); r.status != 200 {
		t.Fatalf("reset = %d %s", r.status, r.body)
	}
	if r := h2.get(ownerKey, "/transcriptions/"+id); r.status != 404 {
		t.Errorf("after reset GET = %d, want 404", r.status)
	}
	if got := balance(t, h2); got != 600 {
		t.Errorf("balance after reset = %v, want 600", got)
	}
}

func TestDemoSeedGeneratesKeys(t *testing.T) {
	srv, err := New(context.Background(), Options{MediaDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if len(srv.GeneratedKeys) != 2 || srv.GeneratedKeys[0].Key == srv.GeneratedKeys[1].Key {
		t.Fatalf("generated keys = %+v, want two different keys", srv.GeneratedKeys)
	}
	var stored int
	srv.db.QueryRow(`SELECT COUNT(*) FROM api_keys WHERE hash = ? OR last4 = ?`, srv.GeneratedKeys[0].Key, srv.GeneratedKeys[0].Key).Scan(&stored)
	if stored != 0 {
		t.Errorf("a generated key is stored in clear")
	}
}

// TestProbeMP4EmptyHeaderBox: an MP4 whose mvhd or mdhd box has no body is corrupt, not a crash
// of the upload request.
func TestProbeMP4EmptyHeaderBox(t *testing.T) {
	box := func(typ string, body ...[]byte) []byte {
		var b []byte
		for _, x := range body {
			b = append(b, x...)
		}
		size := make([]byte, 4)
		binary.BigEndian.PutUint32(size, uint32(8+len(b)))
		return append(append(size, typ...), b...)
	}
	ftyp := box("ftyp", []byte("isom\x00\x00\x02\x00isomiso2mp41"))
	for _, typ := range []string{"mvhd", "mdhd"} {
		var moov []byte
		if typ == "mvhd" {
			moov = box("moov", box("mvhd"))
		} else {
			moov = box("moov", box("trak", box("mdia", box("mdhd"))))
		}
		path := filepath.Join(t.TempDir(), "empty-"+typ+".mp4")
		if err := os.WriteFile(path, append(ftyp, moov...), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := probeMedia(context.Background(), path, media.Ext(path)); got.failure != "FILE_CORRUPTED" {
			t.Errorf("probeMedia(MP4 with an empty %s) failure = %q, want FILE_CORRUPTED", typ, got.failure)
		}
	}
}
