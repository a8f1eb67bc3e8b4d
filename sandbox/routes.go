package sandbox

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// endpoint classes decide which per-key rate limit applies.
const (
	classData   = "data"
	classDelete = "delete"
)

func (s *Server) routes() {
	mux := http.NewServeMux()
	api := func(pattern, class string, h http.HandlerFunc) {
		mux.Handle(pattern, s.authenticate(s.rateLimit(class, h)))
	}
	p := func(method, path string) string { return method + " " + BasePath + path }

	api(p("POST", "/transcriptions"), classData, s.handleUpload)
	api(p("GET", "/transcriptions"), classData, s.handleList)
	api(p("POST", "/transcriptions/export"), classData, s.handleBulkExport)
	api(p("GET", "/transcriptions/{id}"), classData, s.handleGet)
	api(p("PATCH", "/transcriptions/{id}"), classData, s.handlePatch)
	api(p("DELETE", "/transcriptions/{id}"), classDelete, s.handleDelete)
	api(p("GET", "/transcriptions/{id}/export"), classData, s.handleExport)
	api(p("POST", "/transcriptions/{id}/reports"), classData, s.handleRequestReports)
	api(p("GET", "/prompts"), classData, s.handlePrompts)
	api(p("GET", "/projects"), classData, s.handleProjects)
	api(p("GET", "/workspace"), classData, s.handleWorkspace)
	api(p("GET", "/workspace/members"), classData, s.handleMembers)
	api(p("PUT", "/workspace/members/{user_id}/identities"), classData, s.handlePutIdentity)
	api(p("DELETE", "/workspace/members/{user_id}/identities/{provider}/{external_id}"), classData, s.handleDeleteIdentity)

	mux.HandleFunc("GET "+BasePath+"/openapi.yaml", serveOpenAPI)
	s.controlRoutes(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, http.StatusNotFound, "not_found", "no such endpoint: "+r.Method+" "+r.URL.Path, nil)
	})
	s.mux = mux
}

// requestInfo travels in the request context so the journal learns the error code written.
type requestInfo struct {
	code    string
	keyLast string
	fault   string
}

type infoKey struct{}

func infoFrom(r *http.Request) *requestInfo {
	info, _ := r.Context().Value(infoKey{}).(*requestInfo)
	return info
}

// statusWriter remembers the status written, for the journal.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ServeHTTP journals the request, injects faults on API paths and dispatches it. An answer given
// before the request body was read closes the connection after it (see earlyAnswerWriter).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	info := &requestInfo{}
	r = r.WithContext(context.WithValue(r.Context(), infoKey{}, info))
	w, r = trackBody(w, r) // an answer before the body is read must reach a client still sending
	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		status := sw.status
		if p := recover(); p != nil {
			if info.fault == "" {
				info.fault = "panic"
			}
			status = 0 // connection reset: no status reached the client
			s.journal(r, status, info, time.Since(start))
			panic(p)
		}
		s.journal(r, status, info, time.Since(start))
	}()
	if isAPIPath(r.URL.Path) && r.URL.Path != BasePath+"/openapi.yaml" {
		if s.faults.inject(sw, r, info, s.mux) {
			return
		}
	}
	s.mux.ServeHTTP(sw, r)
}

func isAPIPath(p string) bool {
	return len(p) >= len(BasePath) && p[:len(BasePath)] == BasePath
}

func (s *Server) journal(r *http.Request, status int, info *requestInfo, d time.Duration) {
	if !isAPIPath(r.URL.Path) {
		return
	}
	_, err := s.db.ExecContext(context.Background(), `INSERT INTO journal (at, method, path, query, key_last4, idem_key,
		status, code, fault, duration_ms) VALUES (?,?,?,?,?,?,?,?,?,?)`, s.now().UnixNano(), r.Method, r.URL.Path,
		redactQuery(r.URL.Query()), info.keyLast, r.Header.Get("Idempotency-Key"), status, info.code, info.fault,
		float64(d.Microseconds())/1000)
	if err != nil {
		s.opts.Logf("sandbox: journal: %v", err)
	}
	if s.journaled.Add(1)%1000 == 0 {
		// Keep the newest journalKeep entries: a long-running sandbox must not grow without end.
		if _, err := s.db.ExecContext(context.Background(), `DELETE FROM journal WHERE seq <= (SELECT MAX(seq) FROM journal) - ?`, journalKeep); err != nil {
			s.opts.Logf("sandbox: prune journal: %v", err)
		}
	}
}

// journalKeep is how many journal entries the sandbox keeps.
const journalKeep = 100000

// redactQuery encodes q for the journal with credentials replaced: values of parameters named
// like credentials and values that look like keys or tokens.
func redactQuery(q url.Values) string {
	for name, vals := range q {
		for i, v := range vals {
			switch strings.ToLower(name) {
			case "api_key", "apikey", "key", "access_token", "token":
				vals[i] = "[redacted]"
			default:
				if looksLikeSecret(v) {
					vals[i] = "[redacted]"
				}
			}
		}
	}
	return q.Encode()
}
