// Package connectortest is the suite every connectors.Source passes.
package connectortest

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/transcript-bridge/bridge/connectors"
)

// Fixture changes what a source under test holds.
type Fixture interface {
	// Put adds or replaces the item named name (a file name with its extension).
	Put(t *testing.T, name string, data []byte)
	// Remove deletes the item.
	Remove(t *testing.T, name string)
	// Settle makes every change visible to List (lets files become stable, waits for an index).
	Settle(t *testing.T)
}

// Renamer is implemented by fixtures whose source names items itself (Zoom: the topic, the
// start and the file's extension): Listed returns the name an item put as name is listed with.
type Renamer interface {
	Listed(name string) string
}

// Run runs the suite; open returns a fresh, empty source and its fixture for each test.
func Run(t *testing.T, open func(t *testing.T) (connectors.Source, Fixture)) {
	t.Run("ListsWhatIsThere", func(t *testing.T) {
		src, fx := open(t)
		if got := list(t, src); len(got) != 0 {
			t.Fatalf("empty source listed %d recordings", len(got))
		}
		fx.Put(t, "a.wav", []byte("first file"))
		fx.Put(t, "b.mp3", []byte("second file, longer"))
		fx.Settle(t)
		got := list(t, src)
		if len(got) != 2 {
			t.Fatalf("listed %d recordings, want 2", len(got))
		}
		byName := map[string]connectors.Recording{}
		listed := func(name string) string {
			if r, ok := fx.(Renamer); ok {
				return r.Listed(name)
			}
			return name
		}
		for _, r := range got {
			if r.ItemID == "" || r.Version == "" {
				t.Errorf("recording %+v lacks an item id or version", r)
			}
			byName[r.Name] = r
		}
		if r := byName[listed("b.mp3")]; r.Size != int64(len("second file, longer")) && r.Size != 0 {
			t.Errorf("size of b.mp3 = %d", r.Size)
		}
		if b := read(t, src, byName[listed("a.wav")]); string(b) != "first file" {
			t.Errorf("Open(a.wav) read %q", b)
		}
	})
	t.Run("SameVersionUntilChanged", func(t *testing.T) {
		src, fx := open(t)
		fx.Put(t, "a.wav", []byte("v1"))
		fx.Settle(t)
		first := one(t, list(t, src))
		again := one(t, list(t, src))
		if first.ItemID != again.ItemID || first.Version != again.Version {
			t.Errorf("two listings of an unchanged item differ: %+v, %+v", first, again)
		}
		fx.Put(t, "a.wav", []byte("version two"))
		fx.Settle(t)
		changed := one(t, list(t, src))
		if changed.ItemID != first.ItemID || changed.Version == first.Version {
			t.Errorf("a changed item kept its version: %+v → %+v", first, changed)
		}
		if b := read(t, src, changed); string(b) != "version two" {
			t.Errorf("Open(new version) read %q", b)
		}
		if rc, err := src.Open(context.Background(), first); err == nil {
			rc.Close()
			t.Errorf("Open of a replaced version succeeded; want an error")
		}
	})
	t.Run("RemovedItems", func(t *testing.T) {
		src, fx := open(t)
		fx.Put(t, "a.wav", []byte("gone soon"))
		fx.Settle(t)
		r := one(t, list(t, src))
		fx.Remove(t, "a.wav")
		fx.Settle(t)
		if got := list(t, src); len(got) != 0 {
			t.Errorf("a removed item is still listed: %+v", got)
		}
		if rc, err := src.Open(context.Background(), r); err == nil {
			rc.Close()
			t.Errorf("Open of a removed item succeeded")
		}
	})
}

func list(t *testing.T, src connectors.Source) []connectors.Recording {
	t.Helper()
	recs, _, err := src.List(context.Background(), "")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return recs
}

func one(t *testing.T, recs []connectors.Recording) connectors.Recording {
	t.Helper()
	if len(recs) != 1 {
		t.Fatalf("listed %d recordings, want 1", len(recs))
	}
	return recs[0]
}

func read(t *testing.T, src connectors.Source, r connectors.Recording) []byte {
	t.Helper()
	rc, err := src.Open(context.Background(), r)
	if err != nil {
		t.Fatalf("Open(%s): %v", r.ItemID, err)
	}
	defer rc.Close()
	var b bytes.Buffer
	if _, err := io.Copy(&b, rc); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
