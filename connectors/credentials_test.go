package connectors_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/transcript-bridge/bridge/connectors"
)

func TestHostRule(t *testing.T) {
	zoom := connectors.HostRule{Domains: []string{"zoom.us"}, Hosts: []string{"127.0.0.1:9000"}}
	for _, tc := range []struct {
		host string
		want bool
	}{
		{"zoom.us", true}, {"us06web.zoom.us", true}, {"ZOOM.US", true}, {"api.zoom.us:443", true}, {"zoom.us.", true},
		{"evilzoom.us", false}, {"zoom.us.evil.test", false}, {"attacker.test", false},
		{"127.0.0.1:9000", true}, {"127.0.0.1:9001", false}, {"169.254.169.254", false},
	} {
		if got := zoom.Allows(tc.host); got != tc.want {
			t.Errorf("Allows(%q) = %v, want %v", tc.host, got, tc.want)
		}
	}
}

// TestKeepCredentials: a redirect to another host (even a subdomain Go itself would trust)
// arrives without the credential; one to an allowed host keeps it.
func TestKeepCredentials(t *testing.T) {
	var got string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
	}))
	defer other.Close()
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/content", http.StatusFound)
	}))
	defer first.Close()
	// Both on 127.0.0.1: Go's own rule would keep the header (same host, another port).
	for _, tc := range []struct {
		name string
		rule *connectors.HostRule
		want string
	}{
		{"no rule", nil, ""},
		{"first host only", &connectors.HostRule{Hosts: []string{strings.TrimPrefix(first.URL, "http://")}}, ""},
		{"both allowed", &connectors.HostRule{Hosts: []string{strings.TrimPrefix(first.URL, "http://"), strings.TrimPrefix(other.URL, "http://")}}, "Bearer secret"},
	} {
		got = "unset"
		c := &http.Client{CheckRedirect: connectors.KeepCredentials(tc.rule)}
		req, _ := http.NewRequest(http.MethodGet, first.URL, nil)
		req.Header.Set("Authorization", "Bearer secret")
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if got != tc.want {
			t.Errorf("%s: the redirect's target got Authorization %q, want %q", tc.name, got, tc.want)
		}
	}
}
