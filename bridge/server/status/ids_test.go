package status

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/transcript-bridge/bridge/connectors"
)

var flashText = regexp.MustCompile(`<p class="flash"[^>]*>([^<]*)<`)

// TestIdsPeopleCanTellApart: jobs found in the same minute, whose ids begin alike, are listed
// by their file names with their ids' distinct tails; the search finds a job by a part of its
// file name, owner, external id or id; the banners after a release and a replay name the file.
func TestIdsPeopleCanTellApart(t *testing.T) {
	rg := newRig(t, nil)
	ctx := context.Background()
	names := []string{"Quarterly review.mp4", "Standup.wav", "All hands.m4a"}
	var recs []connectors.Recording
	for i, n := range names {
		recs = append(recs, connectors.Recording{ItemID: "item-" + string(rune('a'+i)), Version: "1", Name: n, Size: 4096,
			Owner: &connectors.Owner{Provider: "localdir", ID: "u-" + string(rune('a'+i)), Email: string(rune('a'+i)) + "@acme.test"}})
	}
	jobs, err := rg.store.AddRecordings(ctx, "inbox", recs, "", t0)
	if err != nil || len(jobs) != 3 {
		t.Fatalf("AddRecordings = %v, %v", jobs, err)
	}
	if jobs[0].ID[:8] != jobs[1].ID[:8] {
		t.Fatalf("ids %s and %s made at once begin differently: the premise of this test is gone", jobs[0].ID, jobs[1].ID)
	}
	csrf := rg.login(t, rg.client)
	_, page := rg.get(t, rg.client, "/jobs")
	for _, j := range jobs {
		row := page[strings.Index(page, `<tr id="job-`+j.ID+`"`):]
		row = row[:strings.Index(row, "</tr>")]
		contains(t, "the row of "+j.Name, row, ">"+j.Name+"</a>", ">"+idTail(j.ID)+"</code>")
	}
	for _, c := range []struct{ q, want string }{
		{"Quarterly", "Quarterly review.mp4"}, {"quarterly", "Quarterly review.mp4"}, {"b@acme", "Standup.wav"},
		{jobs[2].ID, "All hands.m4a"}, {jobs[2].ID[len(jobs[2].ID)-12:], "All hands.m4a"},
	} {
		_, found := rg.get(t, rg.client, "/jobs?q="+url.QueryEscape(c.q))
		if !strings.Contains(found, "1 job,") && !strings.Contains(found, "1 job ") || !strings.Contains(found, ">"+c.want+"</a>") {
			t.Errorf("GET /jobs?q=%s does not find %q alone:\n%s", c.q, c.want, found[strings.Index(found, "<main"):])
		}
	}

	held := rg.heldJob(t, "Board meeting.mp4")
	_, page = rg.get(t, rg.client, "/held")
	contains(t, "the held queue", page, ">Board meeting.mp4</a>", ">"+idTail(held.ID)+"</code>")
	rg.post(t, rg.client, "/held/"+held.ID+"/reassign", url.Values{"csrf": {csrf}, "member": {"m-sam"}})
	_, page = rg.get(t, rg.client, "/held")
	if m := flashText.FindStringSubmatch(page); m == nil || !strings.Contains(m[1], "Board meeting.mp4") {
		t.Errorf("the banner after a reassign = %v, want it to name the file Board meeting.mp4", m)
	}
	d := rg.deadDelivery(t, &jobs[0], "crm")
	rg.post(t, rg.client, "/deliveries/"+d.ID+"/replay", url.Values{"csrf": {csrf}})
	_, page = rg.get(t, rg.client, "/deliveries")
	if m := flashText.FindStringSubmatch(page); m == nil || !strings.Contains(m[1], "Quarterly review.mp4") {
		t.Errorf("the banner after a replay = %v, want it to name the file Quarterly review.mp4", m)
	}
	contains(t, "the deliveries list", page, ">"+idTail(d.ID)+"</code>", ">Quarterly review.mp4</a>")
	_, page = rg.get(t, rg.client, "/deliveries/"+d.ID)
	contains(t, "the delivery's page", page, ">Quarterly review.mp4 (job "+jobs[0].ID+")</a>")
	_, page = rg.get(t, rg.client, "/jobs/"+jobs[0].ID)
	contains(t, "the job's page", page, "<h1>Quarterly review.mp4 (job "+jobs[0].ID+")</h1>")
}
