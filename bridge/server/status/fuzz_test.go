package status

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// FuzzBackTo: whatever a form names as its return path, the browser is sent to a path of this
// site: one slash, then no second slash or backslash, and no control character a browser
// would drop (issue 30, point 7).
func FuzzBackTo(f *testing.F) {
	for _, s := range []string{"/held?x=1", "//evil.test", "/\\evil.test", "/\t/evil.test", "https://evil.test/", "/a\r\nSet-Cookie: x", "", "/jobs?q=a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		got := backTo(path, "/fallback")
		if got == "/fallback" {
			return
		}
		if got != path || !strings.HasPrefix(got, "/") || strings.HasPrefix(got, "//") || strings.ContainsRune(got, '\\') ||
			strings.ContainsFunc(got, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Errorf("backTo(%q) = %q: not a path of this site", path, got)
		}
		// What the browser resolves it to stays on the site.
		u, err := url.Parse("https://bridge.example" + got)
		if err == nil && u.Host != "bridge.example" {
			t.Errorf("backTo(%q) = %q leads to host %q", path, got, u.Host)
		}
	})
}

// FuzzForms: the page's forms, posted with any fields by a signed-in admin, are answered with
// a redirect or a refusal, never a server error, and a redirect never leaves the site (issue
// 30, point 7). One page and session serve every input; each input acts on a job of its own.
func FuzzForms(f *testing.F) {
	f.Add("release", "email:sam@acme.test", "/held", "")
	f.Add("reassign", "\x00", "//evil", "member")
	f.Add("replay", "<script>", "/\t/x", "2026-01-01T00:00:00Z")
	f.Add("pause", "", "https://x", "")
	f.Add("other", "../../etc/passwd", "/jobs", "%00")
	rg := newRig(f, nil)
	c := newClient(f)
	csrf := rg.login(f, c)
	n := 0
	f.Fuzz(func(t *testing.T, action, value, ret, extra string) {
		n++
		j := rg.heldJob(t, fmt.Sprintf("call-%d.wav", n))
		path := map[string]string{
			"release":  "/held/" + j.ID + "/release",
			"reassign": "/held/" + j.ID + "/reassign",
			"replay":   "/deliveries/replay",
			"pause":    "/endpoints/crm/pause",
			"resume":   "/endpoints/crm/resume",
		}[action]
		if path == "" {
			path = "/held/" + url.PathEscape(value) + "/release"
		}
		form := url.Values{"csrf": {csrf}, "author": {value}, "member": {value}, "return": {ret},
			"endpoint": {extra}, "since": {extra}, "dead_only": {value}}
		res, _ := rg.post(t, c, path, form)
		if res.StatusCode >= 500 {
			t.Errorf("POST %s with %q, %q, %q = %d", path, value, ret, extra, res.StatusCode)
		}
		if res.StatusCode == http.StatusSeeOther {
			if loc := res.Header.Get("Location"); backTo(loc, "") != loc {
				t.Errorf("POST %s with return %q sent the browser to %q", path, ret, loc)
			}
		}
	})
}
