// Package httpenv builds outbound HTTP transports that honour the proxy environment:
// HTTPS_PROXY, HTTP_PROXY and NO_PROXY (and their lower-case forms), read when the transport is
// made rather than once per process as http.ProxyFromEnvironment does. As there, requests to
// localhost and loopback addresses never go through a proxy.
package httpenv

import (
	"net/http"
	"net/url"
	"time"

	"golang.org/x/net/http/httpproxy"
)

// ProxyFunc returns the proxy function of c for an http.Transport: the proxy URL for a
// request, nil to connect directly.
func ProxyFunc(c *httpproxy.Config) func(*http.Request) (*url.URL, error) {
	f := c.ProxyFunc()
	return func(r *http.Request) (*url.URL, error) { return f(r.URL) }
}

// Proxy returns the proxy function of the environment as it is now.
func Proxy() func(*http.Request) (*url.URL, error) {
	return ProxyFunc(httpproxy.FromEnvironment())
}

// Transport returns a copy of http.DefaultTransport (its timeouts, keep-alives and HTTP/2)
// whose proxy is the environment's as it is now.
func Transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = Proxy()
	return t
}

// Client returns a client over Transport with the given overall timeout (0: none).
func Client(timeout time.Duration) *http.Client {
	return &http.Client{Transport: Transport(), Timeout: timeout}
}
