package localdir

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

// An inbox others can write to (issue 30, points 2 and 3): every file operation stays inside
// the folder and follows no link.

// listOne lists the source's one stable file.
func listOne(t *testing.T, s *Source, f *fixture) connectors.Recording {
	t.Helper()
	f.Settle(t)
	recs, _, err := s.List(context.Background(), "")
	if err != nil || len(recs) != 1 {
		t.Fatalf("List = %+v, %v; want one recording", recs, err)
	}
	return recs[0]
}

// TestFinishRefusesLinkedFolders: a done/ or failed/ that is a link (to a folder outside), or
// a link on the way to the target, is an error naming the path; nothing is moved, nothing
// outside is written.
func TestFinishRefusesLinkedFolders(t *testing.T) {
	for _, tc := range []struct {
		name    string
		item    string
		outcome connectors.Outcome
		link    string // the path under the inbox made a link to the outside folder
	}{
		{"done is a link", "a.wav", connectors.OutcomeDone, "done"},
		{"failed is a link", "a.wav", connectors.OutcomeFailed, "failed"},
		{"a folder under done is a link", "team/a.wav", connectors.OutcomeDone, "done/team"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, f := newSource(t, func(c *Config) { c.MoveFinished = true })
			outside := t.TempDir()
			victim := filepath.Join(outside, "a.wav")
			os.WriteFile(victim, []byte("authorized_keys"), 0o600)
			f.Put(t, tc.item, []byte("recording"))
			r := listOne(t, s, f)
			link := filepath.Join(f.dir, filepath.FromSlash(tc.link))
			os.MkdirAll(filepath.Dir(link), 0o755)
			if err := os.Symlink(outside, link); err != nil {
				t.Fatal(err)
			}
			err := s.Finish(context.Background(), r, tc.outcome)
			if err == nil || !strings.Contains(err.Error(), link) || !strings.Contains(err.Error(), "symbolic link") {
				t.Errorf("Finish through a linked %s = %v, want an error naming %s as a link", tc.link, err, link)
			}
			if b, _ := os.ReadFile(victim); string(b) != "authorized_keys" {
				t.Errorf("the file outside the inbox was replaced: %q", b)
			}
			if _, err := os.Stat(filepath.Join(f.dir, filepath.FromSlash(tc.item))); err != nil {
				t.Errorf("the recording was moved away: %v", err)
			}
		})
	}
}

// TestFinishNeverOverwrites: a file already at the target stays as it is, and so does the
// recording.
func TestFinishNeverOverwrites(t *testing.T) {
	s, f := newSource(t, func(c *Config) { c.MoveFinished = true })
	f.Put(t, "a.wav", []byte("new recording"))
	r := listOne(t, s, f)
	os.MkdirAll(filepath.Join(f.dir, "done"), 0o755)
	os.WriteFile(filepath.Join(f.dir, "done", "a.wav"), []byte("yesterday's"), 0o644)
	if err := s.Finish(context.Background(), r, connectors.OutcomeDone); err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Errorf("Finish onto an existing done/a.wav = %v, want an error saying it exists", err)
	}
	if b, _ := os.ReadFile(filepath.Join(f.dir, "done", "a.wav")); string(b) != "yesterday's" {
		t.Errorf("done/a.wav was overwritten: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(f.dir, "a.wav")); string(b) != "new recording" {
		t.Errorf("a.wav is gone or changed: %q", b)
	}
}

// TestOpenRefusesSwaps: a file found, then swapped for a link (outside, or to another file in
// the inbox with the same size and time), or for another file, is not read.
func TestOpenRefusesSwaps(t *testing.T) {
	for _, tc := range []struct {
		name string
		swap func(t *testing.T, dir, path string)
	}{
		{"a link outside", func(t *testing.T, dir, path string) {
			secret := filepath.Join(t.TempDir(), "id_rsa")
			copyWithTimes(t, path, secret, []byte("PRIVATE KEY"))
			os.Remove(path)
			os.Symlink(secret, path)
		}},
		{"a link to a twin inside", func(t *testing.T, dir, path string) {
			twin := filepath.Join(dir, ".twin")
			copyWithTimes(t, path, twin, []byte("PRIVATE KEY"))
			os.Remove(path)
			os.Symlink(".twin", path)
		}},
		{"another file with the same size and time", func(t *testing.T, dir, path string) {
			other := filepath.Join(dir, ".other")
			copyWithTimes(t, path, other, []byte("PRIVATE KEY"))
			os.Rename(other, path)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, f := newSource(t, nil)
			f.Put(t, "a.wav", []byte("recording!!"))
			r := listOne(t, s, f)
			tc.swap(t, f.dir, filepath.Join(f.dir, "a.wav"))
			rc, err := s.Open(context.Background(), r)
			if err == nil {
				b, _ := io.ReadAll(rc)
				rc.Close()
				t.Fatalf("Open after a swap for %s read %q, want an error", tc.name, b)
			}
			if !strings.Contains(err.Error(), "a.wav") {
				t.Errorf("Open after a swap = %v, want an error naming a.wav", err)
			}
		})
	}
}

// copyWithTimes writes data (of the same length as src's content) to dst with src's
// modification time, so size and time alone cannot tell them apart.
func copyWithTimes(t *testing.T, src, dst string, data []byte) {
	t.Helper()
	fi, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Repeat("x", int(fi.Size())-len(data)) + string(data))
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(dst, fi.ModTime(), fi.ModTime())
}

// TestOpenRefusesAFIFO: a FIFO swapped in for a file found is refused at once, never waited on
// (an open of a FIFO without a writer blocks, and no context can stop it).
func TestOpenRefusesAFIFO(t *testing.T) {
	s, f := newSource(t, nil)
	f.Put(t, "a.wav", []byte("recording!!"))
	r := listOne(t, s, f)
	p := filepath.Join(f.dir, "a.wav")
	os.Remove(p)
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() {
		rc, err := s.Open(context.Background(), r)
		if rc != nil {
			rc.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Open of a FIFO = %v, want refused as not a regular file", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Open of a FIFO blocked")
	}
}
