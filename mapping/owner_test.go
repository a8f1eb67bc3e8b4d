package mapping

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/connectors"
)

type directory struct {
	members []api.Member
	err     error
	calls   int
}

func (d *directory) Members(context.Context) ([]api.Member, error) {
	d.calls++
	return d.members, d.err
}

func TestOwnerRules(t *testing.T) {
	dir := &directory{members: []api.Member{
		{ID: "m-sam", Email: "sam@acme.test", Identities: []api.Identity{{Provider: "zoom", ExternalID: "u1"}}},
		{ID: "m-kim", Email: "Kim@Acme.test"},
	}}
	csv := filepath.Join(t.TempDir(), "users.csv")
	os.WriteFile(csv, []byte("external user,member\nu7,email:lee@acme.test\nRay@Acme.test,user:0b7c6a51-8c4f-4d8e-9a43-5d0d5d6c4e01\n"), 0o644)
	zoomUser := func(id, email string) *connectors.Owner {
		return &connectors.Owner{Provider: "zoom", ID: id, Email: email}
	}
	tests := []struct {
		name      string
		rules     Rules
		owner     *connectors.Owner
		preset    string
		want      string
		wantErr   error
		wantOther bool // an error that skips the job
	}{
		{"identity bound", Rules{Resolve: []string{"identity", "email"}}, zoomUser("u1", "x@y.test"), "", "external:zoom:u1", nil, false},
		{"email, any case", Rules{Resolve: []string{"identity", "email"}}, zoomUser("u9", "KIM@acme.TEST"), "", "email:Kim@Acme.test", nil, false},
		{"order counts", Rules{Resolve: []string{"email", "identity"}}, zoomUser("u1", "kim@acme.test"), "", "email:Kim@Acme.test", nil, false},
		{"provider from config", Rules{Provider: "Zoom", Resolve: []string{"identity"}}, &connectors.Owner{Provider: "other", ID: "u1"}, "", "external:zoom:u1", nil, false},
		{"map by id", Rules{Resolve: []string{"identity", "map"}, MapFile: csv}, zoomUser("u7", ""), "", "email:lee@acme.test", nil, false},
		{"map by e-mail", Rules{Resolve: []string{"map"}, MapFile: csv}, zoomUser("u8", "ray@acme.test"), "", "user:0b7c6a51-8c4f-4d8e-9a43-5d0d5d6c4e01", nil, false},
		{"inline map", Rules{Resolve: []string{"map"}, Map: map[string]string{"u5": "email:sam@acme.test"}}, zoomUser("u5", ""), "", "email:sam@acme.test", nil, false},
		{"static last", Rules{Resolve: []string{"identity", "static"}, Author: "email:desk@acme.test"}, zoomUser("u9", ""), "", "email:desk@acme.test", nil, false},
		{"hold by default", Rules{Resolve: []string{"identity", "email"}}, zoomUser("u9", "nobody@acme.test"), "", "", ErrUnmapped, false},
		{"no owner holds", Rules{Resolve: []string{"identity"}}, nil, "", "", ErrUnmapped, false},
		{"skip", Rules{Resolve: []string{"email"}, Otherwise: "skip"}, zoomUser("u9", "nobody@acme.test"), "", "", nil, true},
		{"key owner", Rules{Resolve: []string{"email"}, Otherwise: "key_owner"}, zoomUser("u9", "nobody@acme.test"), "", "", nil, false},
		{"released by hand", Rules{Resolve: []string{"email"}}, zoomUser("u9", "nobody@acme.test"), "email:sam@acme.test", "email:sam@acme.test", nil, false},
		{"static shorthand", Rules{Author: "email:desk@acme.test"}, zoomUser("u1", ""), "", "email:desk@acme.test", nil, false},
	}
	members := &Members{Dir: dir}
	for _, tc := range tests {
		tc.rules.Members = members
		m, err := New("zoom", "zoom", "i", tc.rules)
		if err != nil {
			t.Fatalf("%s: New = %v", tc.name, err)
		}
		j := job("a.m4a")
		j.Owner, j.Author = tc.owner, tc.preset
		got, err := m.Map(context.Background(), j)
		switch {
		case tc.wantErr != nil || tc.wantOther:
			if err == nil || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) || (tc.wantOther && errors.Is(err, ErrUnmapped)) {
				t.Errorf("%s: Map = %q, %v; want error %v (other: %v)", tc.name, got.Author, err, tc.wantErr, tc.wantOther)
			}
		case err != nil || got.Author != tc.want:
			t.Errorf("%s: Map = %q, %v; want %q", tc.name, got.Author, err, tc.want)
		}
	}
	if dir.calls != 1 {
		t.Errorf("the member list was read %d times for %d mappings; want once (cached)", dir.calls, len(tests))
	}
}

func TestUnreadableMembersWait(t *testing.T) {
	dir := &directory{err: &api.Error{Status: 503, Code: "service_unavailable"}}
	m, _ := New("zoom", "zoom", "i", Rules{Resolve: []string{"identity"}, Members: &Members{Dir: dir}})
	j := job("a.m4a")
	j.Owner = &connectors.Owner{Provider: "zoom", ID: "u1"}
	if _, err := m.Map(context.Background(), j); !errors.Is(err, ErrNotReady) {
		t.Errorf("Map with the member list unavailable = %v, want ErrNotReady (the job waits)", err)
	}
}

// TestMemberAuthor: every form naming a member (e-mail in any case, user id, an identity it
// holds) becomes that member's e-mail form; an author naming no member stays as it is.
func TestMemberAuthor(t *testing.T) {
	members := []api.Member{{ID: "m-sam", Email: "sam@acme.test", Identities: []api.Identity{{Provider: "zoom", ExternalID: "u1"}}}}
	for _, tc := range []struct{ author, want string }{
		{"email:sam@acme.test", "email:sam@acme.test"},
		{"email:SAM@acme.test", "email:sam@acme.test"},
		{"user:m-sam", "email:sam@acme.test"},
		{"external:zoom:u1", "email:sam@acme.test"},
		{"external:zoom:u2", "external:zoom:u2"},
		{"email:ada@acme.test", "email:ada@acme.test"},
	} {
		if got := MemberAuthor(members, tc.author); got != tc.want {
			t.Errorf("MemberAuthor(%q) = %q, want %q", tc.author, got, tc.want)
		}
	}
}
