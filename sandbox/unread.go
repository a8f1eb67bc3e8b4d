package sandbox

import (
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// lingerTimeout bounds how long, after answering a request whose body it did not read, the
// connection goes on taking in what the client still sends before it is closed. Reading on for
// a while (instead of closing at once) keeps the client's TCP stack from dropping the answer
// when our close meets data still in flight.
const lingerTimeout = 5 * time.Second

// bodyTracker counts what a handler read of a request body.
type bodyTracker struct {
	io.ReadCloser
	length int64 // Content-Length; -1 when unknown (chunked)
	read   atomic.Int64
	eof    atomic.Bool
}

// Read reads from the body, counting the bytes and noting its end.
func (b *bodyTracker) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.read.Add(int64(n))
	if err == io.EOF {
		b.eof.Store(true)
	}
	return n, err
}

// finished reports whether the body was read to its end.
func (b *bodyTracker) finished() bool {
	return b.length == 0 || b.eof.Load() || (b.length > 0 && b.read.Load() >= b.length)
}

// earlyAnswerWriter makes an answer given before the request body was read (every refusal an
// upload's headers alone decide: 401, 403, 411, 413, 400, 422, 409, 402, 429, and the
// idempotent 200) reach a client that is still sending. Left alone, net/http first reads up to
// 256 KB of the unread body before it writes any answer, so a client streaming a file slowly
// sees nothing until it has sent that much, or forever if it waits for the answer. With
// Connection: close, net/http writes the answer at once and then drains what arrives until
// lingerTimeout and closes. Answers after the whole body was read keep the connection.
type earlyAnswerWriter struct {
	http.ResponseWriter
	body  *bodyTracker
	wrote atomic.Bool
}

// trackBody wraps r's body so that w can tell, when the answer starts, whether it was read.
func trackBody(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request) {
	if r.ProtoMajor != 1 || r.Body == nil || r.Body == http.NoBody {
		return w, r // HTTP/2 ends an unread body with RST_STREAM, the connection lives on
	}
	b := &bodyTracker{ReadCloser: r.Body, length: r.ContentLength}
	r2 := *r
	r2.Body = b
	return &earlyAnswerWriter{ResponseWriter: w, body: b}, &r2
}

// WriteHeader starts the answer, closing the connection after it when the body is unread.
func (w *earlyAnswerWriter) WriteHeader(code int) {
	if code >= 200 {
		w.beforeAnswer()
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write writes the answer's body, starting a 200 answer like WriteHeader when none was started.
func (w *earlyAnswerWriter) Write(b []byte) (int, error) {
	w.beforeAnswer()
	return w.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the connection (read deadlines, flushing).
func (w *earlyAnswerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *earlyAnswerWriter) beforeAnswer() {
	if w.wrote.Swap(true) || w.body.finished() {
		return
	}
	w.Header().Set("Connection", "close")
	// Bound the drain after the answer; the writer may not support deadlines (tests).
	_ = http.NewResponseController(w.ResponseWriter).SetReadDeadline(time.Now().Add(lingerTimeout))
}
