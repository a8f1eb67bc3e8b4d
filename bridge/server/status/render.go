package status

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/transcript-bridge/bridge/api"
	"github.com/transcript-bridge/bridge/bridge"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static/*
var staticFS embed.FS

// views are the parsed pages: each is templates/layout.html and the shared forms.html with one
// page's "content".
type views struct {
	pages map[string]*template.Template
}

// timeFormat is how the page writes times: UTC, to the second.
const timeFormat = "2006-01-02 15:04:05Z"

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format(timeFormat)
	},
	"iso": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	},
	"redact": api.Redact,
	"join":   strings.Join,
	"tail":   idTail,
	"ms":     func(f float64) string { return fmt.Sprintf("%.0f ms", f) },
	"heldForm": func(j any, pk picker, csrf, here string) heldForm {
		f := heldForm{Picker: pk, CSRF: csrf, Here: here}
		switch j := j.(type) {
		case bridge.Job:
			f.Job = j
		case *bridge.Job:
			f.Job = *j
		}
		return f
	},
	"replayForm": func(id, csrf, here string) replayForm { return replayForm{ID: id, CSRF: csrf, Here: here} },
}

// tailLen is how many of an id's last characters tell it apart: a UUID's last group, random
// bits (its first characters are a time, the same for every id made in the same minute).
const tailLen = 12

// idTail returns the distinguishing end of id after an ellipsis ("…5d1c0e4f9a2b"), or the
// whole of a short id.
func idTail(id string) string {
	if len(id) <= tailLen+1 {
		return id
	}
	return "…" + id[len(id)-tailLen:]
}

// heldForm is what forms.html's "heldforms" shows: a held job's reassign and release forms.
type heldForm struct {
	Job        bridge.Job
	Picker     picker
	CSRF, Here string
}

// replayForm is what forms.html's "replayform" shows: a delivery's replay button.
type replayForm struct {
	ID, CSRF, Here string
}

// parseViews parses every page of templates/ with the layout. It fails when one does not parse.
func parseViews() (*views, error) {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	v := &views{pages: map[string]*template.Template{}}
	for _, n := range names {
		name := path.Base(n)
		if name == "layout.html" || name == "forms.html" {
			continue
		}
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/forms.html", n)
		if err != nil {
			return nil, fmt.Errorf("template %s: %w", name, err)
		}
		v.pages[name] = t
	}
	return v, nil
}

// frame is what the layout shows around every page.
type frame struct {
	// Title is the page's title; Nav the path of its tab.
	Title, Nav string
	// NoToken shows the banner of a page without an admin token.
	NoToken bool
	// SignedIn is false on the sign-in form; CSRF the session's token for the forms.
	SignedIn bool
	CSRF     string
	// Flash is the outcome of the last action; Here the path to come back to after one.
	Flash, Here string
	// Refresh is the live refresh period in seconds (0: none).
	Refresh int
	// Now is when the page was made.
	Now time.Time
	// Data is the page's own.
	Data any
}

// render writes page name, titled title, with data, with status: whole, or not at all when a
// template fails (the error is returned).
func (p *Page) render(w http.ResponseWriter, r *http.Request, s *session, status int, name, title string, data any) error {
	t := p.views.pages[name]
	if t == nil {
		return fmt.Errorf("no template %s", name)
	}
	f := frame{Title: title, Nav: "/" + strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 2)[0], NoToken: p.o.Token == "",
		Here: r.URL.RequestURI(), Now: p.now(), Data: data}
	if s != nil {
		f.SignedIn, f.CSRF, f.Flash = true, s.csrf, p.sessions.takeFlash(s)
		if r.Method == http.MethodGet && status == http.StatusOK {
			f.Refresh = int(p.o.Refresh / time.Second)
		}
	}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, "layout", f); err != nil {
		return fmt.Errorf("template %s: %w", name, err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, err := b.WriteTo(w)
	return err
}

// serveStatic serves the embedded stylesheet and script.
func serveStatic(w http.ResponseWriter, r *http.Request) {
	b, err := staticFS.ReadFile("static/" + r.PathValue("file"))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	switch path.Ext(r.PathValue("file")) {
	case ".css":
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	case ".js":
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	}
	w.Header().Set("Cache-Control", "max-age=300")
	w.Write(b)
}

// stateNames are the job states in pipeline order, for filters.
func stateNames() []string {
	out := make([]string, len(bridge.States))
	for i, s := range bridge.States {
		out[i] = string(s)
	}
	return out
}
