package connectors

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// HostRule says which hosts a service's credential may be sent to: its own, and no other. A
// connector that follows links from payloads (a download URL in a webhook, a redirect to a
// pre-authenticated location) checks each against its rule before attaching its credential.
type HostRule struct {
	// Domains are the service's domains: the host itself or any host under it matches
	// ("zoom.us" matches zoom.us and us06web.zoom.us, never zoom.us.example or evilzoom.us).
	Domains []string
	// Hosts are hosts matched exactly (the host of a configured api_url, which may be a test's
	// loopback server), with or without their port.
	Hosts []string
}

// Allows reports whether host (with or without a port) belongs to the service.
func (r HostRule) Allows(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	for _, x := range r.Hosts {
		x = strings.ToLower(x)
		if x == strings.ToLower(host) || x == h {
			return true
		}
	}
	for _, d := range r.Domains {
		d = strings.ToLower(strings.TrimPrefix(d, "."))
		if h == d || strings.HasSuffix(h, "."+d) {
			return true
		}
	}
	return false
}

// credentialHeaders are what a redirect must not carry to another service.
var credentialHeaders = []string{"Authorization", "Cookie", "Proxy-Authorization"}

// KeepCredentials is an http.Client CheckRedirect for a client whose requests carry a
// service's credential: a redirect keeps it only to a host the rule allows (Go's own rule keeps
// it for any subdomain of the first host, and a redirect to a pre-authenticated location needs
// none), at most 10 redirects. A nil rule strips it on every redirect.
func KeepCredentials(rule *HostRule) func(req *http.Request, via []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if rule == nil || !rule.Allows(req.URL.Host) {
			for _, h := range credentialHeaders {
				req.Header.Del(h)
			}
		}
		return nil
	}
}

// WithoutQuery returns err with the URL of a *url.Error in its chain cut to scheme, host and
// path: the query of a download link or of the pre-authenticated location it redirected to
// (access_token, tempauth, signatures) never reaches a log line or a job's reason. Other errors
// are returned as they are; errors.Is and errors.As still see through the result.
func WithoutQuery(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	u, perr := url.Parse(ue.URL)
	if perr != nil || u.RawQuery == "" && u.Fragment == "" && u.User == nil {
		return err
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	ue.URL = u.String() + "?…"
	return err
}
