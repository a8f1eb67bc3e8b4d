package status

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
)

// handler is a page's handler: it writes the answer, or returns the error to show.
type handler func(w http.ResponseWriter, r *http.Request, s *session) error

// httpError is an error shown with its own status.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

// refuse returns an error shown with status and msg.
func refuse(status int, format string, args ...any) error {
	return &httpError{status: status, msg: fmt.Sprintf(format, args...)}
}

// guard adds what every answer of the page carries: security headers, the loopback host check
// of a page without a token (no DNS rebinding), and the refusal of cross-origin POSTs.
func (p *Page) guard(h http.Handler) http.Handler {
	h = http.NewCrossOriginProtection().Handler(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cache-Control", "no-store")
		if p.o.Token == "" {
			if why := notLocal(r); why != "" {
				p.o.Log.Warn("status page: refused without an admin token", "why", why, "remote", r.RemoteAddr)
				http.Error(w, "this status page has no admin token: it answers local requests only, and this one "+why+
					" (set server.admin_token_file to serve it through a proxy)", http.StatusForbidden)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// proxyHeaders are the headers a reverse proxy adds to what it forwards (RFC 7239's Forwarded,
// and the de facto X-Forwarded-* and X-Real-IP of nginx, Apache, Caddy, Traefik and the cloud
// load balancers).
var proxyHeaders = []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Real-Ip"}

// notLocal says why r may come from another machine, "" when it is local: it names a host
// that is not loopback (DNS rebinding), it came from an address that is not loopback, or it
// passed through a proxy (which connects from loopback, with a loopback Host, for anyone: nginx's
// default proxy_pass http://127.0.0.1:8080 sends exactly that).
func notLocal(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	if !loopbackHost(host) {
		return fmt.Sprintf("names the host %q", host)
	}
	remote, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		remote = r.RemoteAddr
	}
	if ip := net.ParseIP(remote); ip == nil || !ip.IsLoopback() {
		return fmt.Sprintf("came from %s", remote)
	}
	for _, h := range proxyHeaders {
		if r.Header.Get(h) != "" {
			return "came through a proxy (" + h + ")"
		}
	}
	return ""
}

// authed runs h for a signed-in session: a page without a token starts one on the first visit;
// otherwise a GET without one goes to the sign-in form and anything else is refused. A POST
// must carry the session's CSRF token.
func (p *Page) authed(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := p.sessionOf(r)
		if s == nil && p.o.Token == "" && r.Method == http.MethodGet {
			var err error
			if s, err = p.sessions.start(p.now()); err != nil {
				p.fail(w, r, nil, err)
				return
			}
			p.setCookie(w, r, s)
		}
		if s == nil {
			if r.Method == http.MethodGet {
				http.Redirect(w, r, "/login", http.StatusSeeOther)
				return
			}
			p.fail(w, r, nil, refuse(http.StatusForbidden, "refused: not signed in (sign in again)"))
			return
		}
		if r.Method == http.MethodPost && !validCSRF(r, s) {
			p.o.Log.Warn("status page: POST refused without a valid CSRF token", "path", r.URL.Path, "remote", r.RemoteAddr)
			p.fail(w, r, s, refuse(http.StatusForbidden, "refused: the form's CSRF token is missing or wrong (reload the page and try again)"))
			return
		}
		if err := h(w, r, s); err != nil {
			p.fail(w, r, s, err)
		}
	})
}

// fail shows err: its own status for an httpError, 404 for an unknown id, else 500.
func (p *Page) fail(w http.ResponseWriter, r *http.Request, s *session, err error) {
	status := http.StatusInternalServerError
	var he *httpError
	switch {
	case errors.As(err, &he):
		status = he.status
	case errors.Is(err, bridge.ErrNotFound), errors.Is(err, bridge.ErrDeliveryNotFound):
		status = http.StatusNotFound
	default:
		p.o.Log.Error("status page", "path", r.URL.Path, "error", err)
	}
	msg := api.Redact(err.Error())
	if rerr := p.render(w, r, s, status, "error.html", http.StatusText(status), msg); rerr != nil {
		http.Error(w, msg, status)
	}
}

// loginForm shows the sign-in form (nothing to sign in to without a token).
func (p *Page) loginForm(w http.ResponseWriter, r *http.Request) {
	if p.o.Token == "" || p.sessionOf(r) != nil {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if err := p.render(w, r, nil, http.StatusOK, "login.html", "Sign in", ""); err != nil {
		p.fail(w, r, nil, err)
	}
}

// login compares the posted token with the admin token in constant time; on a match it starts
// a new session (never one the browser brought) and records the sign-in. Refused sign-ins are
// counted per client address (clientAddr): past a few, each waits twice as long as the one
// before (signins), while a right token from any other address still signs in. Each refusal,
// and the first refused try of each wait, is written to the audit log with the address.
func (p *Page) login(w http.ResponseWriter, r *http.Request) {
	if p.o.Token == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	addr := clientAddr(r, p.o.TrustedProxies)
	p.noteUntrustedProxy(r)
	key := limitKey(addr)
	if wait, first := p.signins.wait(key); wait > 0 {
		if first {
			p.auditRefusal(r, addr, fmt.Sprintf("too many refused sign-ins from this address: waiting %s", wait.Round(time.Second)))
		}
		w.Header().Set("Retry-After", fmt.Sprint(int(wait.Seconds()+0.999)))
		p.fail(w, r, nil, refuse(http.StatusTooManyRequests, "too many refused sign-ins from %s: try again in %s", addr, wait.Round(time.Second)))
		return
	}
	if !sameToken(r.PostFormValue("token"), p.o.Token) {
		wait := p.signins.refused(key)
		p.o.Log.Warn("status page: sign-in refused: wrong token", "remote", addr, "wait", wait)
		p.auditRefusal(r, addr, "wrong token")
		if err := p.render(w, r, nil, http.StatusUnauthorized, "login.html", "Sign in", "Wrong token."); err != nil {
			p.fail(w, r, nil, err)
		}
		return
	}
	p.signins.succeeded(key)
	if old := p.sessionOf(r); old != nil {
		p.sessions.end(old)
	}
	s, err := p.sessions.start(p.now())
	if err != nil {
		p.fail(w, r, nil, err)
		return
	}
	p.setCookie(w, r, s)
	p.record(r.Context(), bridge.AuditEntry{Who: p.who(r, s), Action: "login"})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// auditRefusal writes a refused sign-in from addr to the audit log, at most auditedRefusals a
// minute in all: past that (a flood from many addresses) each is logged but not kept, so the
// store does not grow without bound.
func (p *Page) auditRefusal(r *http.Request, addr, why string) {
	if !p.refusalsAudited.Allow() {
		p.o.Log.Warn("status page: refused sign-in not written to the audit log (more than a minute's share)", "remote", addr, "why", why)
		return
	}
	p.record(r.Context(), bridge.AuditEntry{Who: "sign-in from " + addr, Action: "login refused", Error: why})
}

// auditedRefusals is how many refused sign-ins a minute the audit log keeps.
const auditedRefusals = 60

// noteUntrustedProxy warns once when a sign-in came with X-Forwarded-For from an address not in
// TrustedProxies: a proxy in front that is not listed makes every client look like the proxy,
// so one guesser's wait is everyone's.
func (p *Page) noteUntrustedProxy(r *http.Request) {
	if r.Header.Get("X-Forwarded-For") == "" || clientAddr(r, p.o.TrustedProxies) != clientAddr(r, nil) {
		return
	}
	p.untrustedProxy.Do(func() {
		p.o.Log.Warn("status page: sign-ins arrive with X-Forwarded-For from an address not in server.trusted_proxies: list the proxy there, or every client is limited as the proxy", "remote", r.RemoteAddr)
	})
}

// logout ends the session and records it.
func (p *Page) logout(w http.ResponseWriter, r *http.Request, s *session) error {
	p.record(r.Context(), bridge.AuditEntry{Who: p.who(r, s), Action: "logout"})
	p.sessions.end(s)
	p.clearCookie(w, r)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
	return nil
}

// who names the admin behind r in the audit log: "admin session <tag> from <address>" when
// signed in with the token, "admin from <address>" on a page without one.
func (p *Page) who(r *http.Request, s *session) string {
	host := clientAddr(r, p.o.TrustedProxies)
	if p.o.Token == "" {
		return "admin from " + host
	}
	return "admin session " + s.tag + " from " + host
}

// record writes e to the audit log at now; a failure is logged and returned.
func (p *Page) record(ctx context.Context, e bridge.AuditEntry) error {
	e.At = p.now()
	err := p.o.Store.Audit(context.WithoutCancel(ctx), e)
	if err != nil {
		p.o.Log.Error("status page: audit log not written", "action", e.Action, "targets", e.Targets, "error", err)
	}
	return err
}

// act runs do, an action on targets, records it in the audit log with its outcome, keeps the
// outcome (do's message, or its error) for the next page, and sends the browser back to where
// the form says (a path of this site), else to fallback.
func (p *Page) act(w http.ResponseWriter, r *http.Request, s *session, action string, targets []string, detail, fallback string,
	do func(ctx context.Context) (string, error)) error {
	msg, err := do(r.Context())
	e := bridge.AuditEntry{Who: p.who(r, s), Action: action, Targets: targets, Detail: detail}
	if err != nil {
		e.Error = api.Redact(err.Error())
		msg = action + " failed: " + e.Error
		p.o.Log.Warn("status page: action failed", "action", action, "targets", targets, "error", err)
	}
	if aerr := p.record(r.Context(), e); aerr != nil {
		msg += " (not written to the audit log: " + aerr.Error() + ")"
	}
	p.sessions.setFlash(s, msg)
	http.Redirect(w, r, backTo(r.PostFormValue("return"), fallback), http.StatusSeeOther)
	return nil
}

// backTo returns path when it is a path of this site ("/held?x=1"), else fallback: never
// another site ("//evil", "/\evil", "https://…"), and never a path with a control character
// (browsers drop a tab or a newline, so "/\t/evil.test" is "//evil.test" to them) or a
// backslash (read as a slash).
func backTo(path, fallback string) string {
	if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//") || strings.ContainsRune(path, '\\') {
		return fallback
	}
	for _, c := range path {
		if c < 0x20 || c == 0x7f {
			return fallback
		}
	}
	return path
}

// ago says how long before now t was ("3m ago"); "never" for a zero time.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return "in " + (-d).Round(time.Second).String()
	case d < time.Minute:
		return d.Round(time.Second).String() + " ago"
	case d < 48*time.Hour:
		return d.Round(time.Minute).String() + " ago"
	}
	return fmt.Sprintf("%d days ago", int(d.Hours()/24))
}
