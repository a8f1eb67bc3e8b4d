package connectors_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/connectors"
)

func TestNetFailure(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", &url.Error{Op: "Get", URL: "https://zoom.us/rec", Err: dial}, true},
		{"reset mid-body", fmt.Errorf("read body: %w", syscall.ECONNRESET), true},
		{"body cut short", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{"closed before the answer", &url.Error{Op: "Get", URL: "https://x", Err: io.EOF}, true},
		{"timeout", &url.Error{Op: "Get", URL: "https://x", Err: timeout{}}, true},
		{"no such host", &net.DNSError{Err: "no such host", Name: "storage.example"}, true},
		{"cancelled", &url.Error{Op: "Get", URL: "https://x", Err: context.Canceled}, false},
		{"bad URL", &url.Error{Op: "Get", URL: "ftp://x", Err: errors.New("unsupported protocol scheme")}, false},
		{"a refusal", errors.New("403 forbidden"), false},
		{"end of a body", io.EOF, false},
		{"nil", nil, false},
	} {
		if got := connectors.NetFailure(tc.err); got != tc.want {
			t.Errorf("NetFailure(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

type timeout struct{}

func (timeout) Error() string   { return "i/o timeout" }
func (timeout) Timeout() bool   { return true }
func (timeout) Temporary() bool { return true }

func TestTransient(t *testing.T) {
	err := fmt.Errorf("upload a.m4a: %w", connectors.Transient(errors.New("zoom download x: 503"), 2*time.Minute))
	if !errors.Is(err, connectors.ErrTransient) || connectors.TransientWait(err) != 2*time.Minute || err.Error() != "upload a.m4a: zoom download x: 503" {
		t.Errorf("Transient: %q, transient %v, retry after %v; want the message unchanged, transient, 2m",
			err, errors.Is(err, connectors.ErrTransient), connectors.TransientWait(err))
	}
	if connectors.Transient(nil, time.Second) != nil {
		t.Errorf("Transient(nil) is not nil")
	}
	if connectors.TransientWait(errors.New("x")) != 0 {
		t.Errorf("TransientWait of a plain error is not 0")
	}
}

// failing reads body, then fails with err.
type failing struct {
	body string
	err  error
}

func (f *failing) Read(p []byte) (int, error) {
	if f.body == "" {
		return 0, f.err
	}
	n := copy(p, f.body)
	f.body = f.body[n:]
	return n, nil
}

func (f *failing) Close() error { return nil }

func TestExactBody(t *testing.T) {
	for _, tc := range []struct {
		name      string
		body      string
		err       error
		want      int64
		transient bool
		msg       string
	}{
		{"exact", "0123456789", io.EOF, 10, false, ""},
		{"size unknown", "0123456789", io.EOF, 0, false, ""},
		{"cut short", "01234", io.EOF, 10, true, "5 of 10 bytes (cut short)"},
		{"longer", "0123456789AB", io.EOF, 10, true, "more than the 10 bytes announced"},
		{"reset", "01234", syscall.ECONNRESET, 10, true, "reading after 5 bytes: connection reset by peer"},
		{"classified by the source", "01", connectors.Transient(errors.New("html"), time.Minute), 10, true, "html"},
	} {
		b, err := io.ReadAll(connectors.ExactBody(&failing{tc.body, tc.err}, tc.want, "zoom download x"))
		switch {
		case tc.msg == "" && (err != nil || string(b) != tc.body):
			t.Errorf("ExactBody(%q) read %q, %v; want %q", tc.name, b, err, tc.body)
		case tc.msg != "" && (err == nil || !strings.Contains(err.Error(), tc.msg) || errors.Is(err, connectors.ErrTransient) != tc.transient):
			t.Errorf("ExactBody(%q) = %v, want a transient error saying %q", tc.name, err, tc.msg)
		}
	}
}
