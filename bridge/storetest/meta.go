package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge"
)

var instanceIDCases = append([]testCase{
	{"stable", func(t *testing.T, d *db) {
		a, err := d.InstanceID(ctx)
		b, _ := d.InstanceID(ctx)
		if err != nil || a == "" || a != b {
			t.Errorf("InstanceID() twice = %q, %q, %v; want one stable id", a, b, err)
		}
		if c, err := d.another().InstanceID(ctx); c != a || err != nil {
			t.Errorf("InstanceID() on a second handle = %q, %v; want %q", c, err, a)
		}
	}},
	{"differs between databases", func(t *testing.T, d *db) {
		a, err := d.InstanceID(ctx)
		b, err2 := d.fresh().InstanceID(ctx)
		if err != nil || err2 != nil || a == b {
			t.Errorf("InstanceID() in two new databases = %q, %q (%v, %v); want two ids", a, b, err, err2)
		}
	}},
}, concurrent("concurrent first use agrees", func(t *testing.T, d *db, hs []Stores) {
	got := make([]string, 8)
	together(8, func(i int) {
		id, err := hs[i%len(hs)].InstanceID(ctx)
		if err != nil {
			t.Errorf("InstanceID() %d = %v", i, err)
		}
		got[i] = id
	})
	for i := range got {
		if got[i] == "" || got[i] != got[0] {
			t.Errorf("8 concurrent first InstanceID() = %q, want one id", got)
			break
		}
	}
})...)

var noteMappingChangeCases = append([]testCase{
	{"counts every change", func(t *testing.T, d *db) {
		for _, tc := range []struct {
			reason string
			at     time.Time
			want   int64
		}{
			{"identities apply --source zoom: 1 created", t0, 1},
			{"jobs release j-1", t0.Add(time.Minute), 2},
			{"", t0.Add(2 * time.Minute), 3},
		} {
			ch, err := d.NoteMappingChange(ctx, tc.reason, tc.at)
			want := bridge.MappingChange{Generation: tc.want, Reason: tc.reason, At: tc.at}
			if err != nil || !sameMappingChange(ch, want) {
				t.Errorf("NoteMappingChange(%q, %v) = %+v, %v; want %+v", tc.reason, tc.at, ch, err, want)
			}
		}
	}},
}, concurrent("concurrent changes are all counted", func(t *testing.T, d *db, hs []Stores) {
	together(8, func(i int) {
		if _, err := hs[i%len(hs)].NoteMappingChange(ctx, fmt.Sprint("concurrent ", i), t0); err != nil {
			t.Errorf("NoteMappingChange(concurrent %d) = %v", i, err)
		}
	})
	for i, s := range hs {
		if ch, err := s.LastMappingChange(ctx); err != nil || ch.Generation != 8 {
			t.Errorf("LastMappingChange() on handle %d after 8 concurrent changes = %+v, %v; want generation 8 (none lost)", i, ch, err)
		}
	}
})...)

var lastMappingChangeCases = []testCase{
	{"before any change", func(t *testing.T, d *db) {
		if ch, err := d.LastMappingChange(ctx); err != nil || ch.Generation != 0 || ch.Reason != "" || !ch.At.IsZero() {
			t.Errorf("LastMappingChange() before any = %+v, %v; want generation 0", ch, err)
		}
	}},
	{"the latest change", func(t *testing.T, d *db) {
		d.NoteMappingChange(ctx, "first", t0)
		want, _ := d.NoteMappingChange(ctx, "second", t0.Add(time.Minute))
		if ch, err := d.LastMappingChange(ctx); err != nil || !sameMappingChange(ch, want) {
			t.Errorf("LastMappingChange() = %+v, %v; want %+v", ch, err, want)
		}
	}},
	{"seen by the other handle", func(t *testing.T, d *db) {
		mappingChangeShared(t, d.Store, d.another().Store)
	}},
}

var closeCases = []testCase{
	{"the next handle finds everything", func(t *testing.T, d *db) {
		j := d.job(t)
		id, _ := d.InstanceID(ctx)
		if err := d.Close(); err != nil {
			t.Fatalf("Close() = %v, want nil", err)
		}
		next := d.another()
		if got, err := next.Job(ctx, j.ID); err != nil || !sameJob(*got, j) {
			t.Errorf("Job(%s) on the next handle = %+v, %v; want %+v", j.ID, got, err, j)
		}
		if again, err := next.InstanceID(ctx); again != id || err != nil {
			t.Errorf("InstanceID() on the next handle = %q, %v; want %q", again, err, id)
		}
	}},
	{"another handle stays open", func(t *testing.T, d *db) {
		other := d.another()
		if err := d.Close(); err != nil {
			t.Fatalf("Close() = %v, want nil", err)
		}
		if _, err := other.AddRecordings(ctx, "inbox", []recording{rec("a", "1")}, "", t0); err != nil {
			t.Errorf("AddRecordings on another handle after Close() = %v, want nil", err)
		}
	}},
}

// mappingChangeShared: a mapping change noted on one handle is seen on the other, both ways,
// and concurrent changes from both are all counted.
func mappingChangeShared(t *testing.T, a, b bridge.Store) {
	if _, err := a.NoteMappingChange(ctx, "identities apply --source zoom", t0); err != nil {
		t.Fatal(err)
	}
	want := bridge.MappingChange{Generation: 1, Reason: "identities apply --source zoom", At: t0}
	if ch, err := b.LastMappingChange(ctx); err != nil || !sameMappingChange(ch, want) {
		t.Errorf("LastMappingChange() on the other handle = %+v, %v; want %+v", ch, err, want)
	}
	if _, err := b.NoteMappingChange(ctx, "jobs release", t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	want = bridge.MappingChange{Generation: 2, Reason: "jobs release", At: t0.Add(time.Second)}
	if ch, err := a.LastMappingChange(ctx); err != nil || !sameMappingChange(ch, want) {
		t.Errorf("LastMappingChange() on the first handle = %+v, %v; want %+v", ch, err, want)
	}
}

func sameMappingChange(got, want bridge.MappingChange) bool {
	return got.Generation == want.Generation && got.Reason == want.Reason && got.At.Equal(want.At)
}
