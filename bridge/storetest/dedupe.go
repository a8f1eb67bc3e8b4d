package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/transcript-bridge/bridge/bridge"
)

// keyed is rec(item, version) carrying a dedupe key: the same content reached through
// another source (a Drive file found by a gdrive source and by a meet source).
func keyed(item, version, key string) recording {
	r := rec(item, version)
	r.DedupeKey = key
	return r
}

// dedupeCases: AddRecordings keeps one job per Recording.DedupeKey across sources.
var dedupeCases = append([]testCase{
	{"the same dedupe key in another source is not another job", func(t *testing.T, d *db) {
		first := d.add(t, "drive", t0, keyed("f1", "md5-a", "gdrive:f1@md5-a"))
		other, err := d.AddRecordings(ctx, "meet", []recording{keyed("f1", "md5-a", "gdrive:f1@md5-a")}, "m1", t0)
		if err != nil || len(other) != 0 {
			t.Errorf("AddRecordings(meet, f1 keyed as drive's) = %d jobs, %v; want 0, nil", len(other), err)
		}
		if all, _ := d.Jobs(ctx, bridge.JobFilter{}); len(all) != 1 || all[0].ID != first[0].ID || all[0].Source != "drive" {
			t.Errorf("Jobs() = %+v; want drive's job alone", all)
		}
		if c, _ := d.Cursor(ctx, "meet"); c != "m1" {
			t.Errorf("Cursor(meet) = %q, want m1 (the cursor moves when the sighting is a no-op)", c)
		}
	}},
	{"another key, or none, is another job", func(t *testing.T, d *db) {
		d.add(t, "drive", t0, keyed("f1", "md5-a", "gdrive:f1@md5-a"), rec("plain", "1"))
		added, err := d.AddRecordings(ctx, "meet", []recording{keyed("f1", "md5-b", "gdrive:f1@md5-b"), rec("plain", "1")}, "", t0)
		if err != nil || len(added) != 2 {
			t.Errorf("AddRecordings(meet, f1@md5-b, plain) = %s, %v; want both (a new version; no key is no dedupe across sources)", ids(added), err)
		}
	}},
	{"one key twice in one call", func(t *testing.T, d *db) {
		added, err := d.AddRecordings(ctx, "drive", []recording{keyed("shortcut", "1", "gdrive:f1@1"), keyed("f1", "1", "gdrive:f1@1")}, "", t0)
		if err != nil || len(added) != 1 || added[0].ItemID != "shortcut" {
			t.Errorf("AddRecordings(drive, two items of one key) = %s, %v; want the first alone", ids(added), err)
		}
	}},
}, concurrent("concurrent sightings by several sources make one job", func(t *testing.T, d *db, hs []Stores) {
	var mu sync.Mutex
	var created []string
	together(8, func(i int) {
		source := []string{"drive", "meet"}[i%2]
		added, err := hs[i%len(hs)].AddRecordings(ctx, source, []recording{keyed("f1", "1", "gdrive:f1@1")}, fmt.Sprint("c", i), t0)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			t.Errorf("AddRecordings %d (%s) = %v", i, source, err)
		}
		for _, j := range added {
			created = append(created, j.Source+"/"+j.ID)
		}
	})
	if len(created) != 1 {
		t.Errorf("8 concurrent AddRecordings of one key by two sources created %v, want one job", created)
	}
})...)
