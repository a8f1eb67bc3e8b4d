// Package server is the bridge's HTTP server: webhook ingress from sources
// (/hooks/<type>/<source>) and a health check (/healthz).
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Server serves the bridge's HTTP endpoints on Addr.
type Server struct {
	// Addr is where to listen ("127.0.0.1:8080"); ":0" picks a port (see Listening).
	Addr string
	// Log receives one line per request that fails (default: discarded).
	Log *slog.Logger
	// Key is the setting Addr comes from, for errors (default server.addr).
	Key string

	mux *http.ServeMux
	ln  net.Listener
}

// New returns a server for addr with /healthz.
func New(addr string, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{Addr: addr, Log: log, mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	return s
}

// Handle routes pattern (http.ServeMux syntax) to h.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// Listen opens the socket, so the address is known before Serve; it fails naming the setting
// (Key, default server.addr) and the address.
func (s *Server) Listen() (string, error) {
	key := s.Key
	if key == "" {
		key = "server.addr"
	}
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", key, s.Addr, err)
	}
	s.ln = ln
	return ln.Addr().String(), nil
}

// Listening returns the address the server listens on once Listen succeeded, else Addr.
func (s *Server) Listening() string {
	if s.ln == nil {
		return s.Addr
	}
	return s.ln.Addr().String()
}

// Close closes the socket of a server that listens but was never served.
func (s *Server) Close() error {
	if s.ln == nil {
		return nil
	}
	return s.ln.Close()
}

// Serve answers requests until ctx ends, then shuts down gracefully (10 s).
func (s *Server) Serve(ctx context.Context) error {
	if s.ln == nil {
		if _, err := s.Listen(); err != nil {
			return err
		}
	}
	srv := &http.Server{Handler: s.mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: time.Minute}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(s.ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		err := srv.Shutdown(sctx)
		if e := <-done; !errors.Is(e, http.ErrServerClosed) && err == nil {
			err = e
		}
		return err
	}
}
