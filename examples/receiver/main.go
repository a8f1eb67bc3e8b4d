// Command receiver is the smallest webhook receiver worth trying the bridge with: it verifies
// each delivery's Standard Webhooks signature with the endpoint's secret, prints the event's
// type and webhook-id, and answers 204, or 401 naming what failed.
//
//	go run ./examples/receiver --addr 127.0.0.1:9000 --secret-file secrets/mine.whsec
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9000", "where to listen")
	secretFile := flag.String("secret-file", "", "file holding the endpoint's whsec_ secret(s)")
	flag.Parse()
	text, err := os.ReadFile(*secretFile)
	if err != nil {
		log.Fatalf("receiver: --secret-file: %v", err)
	}
	secrets, err := webhook.ParseSecrets(string(text))
	if err != nil {
		log.Fatalf("receiver: %s: %v", *secretFile, err)
	}
	log.Printf("receiver: listening on http://%s/", *addr)
	srv := &http.Server{Addr: *addr, Handler: handler(os.Stdout, time.Now, secrets), ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

// handler verifies each request's signature against secrets and prints one line per event.
func handler(out io.Writer, now func() time.Time, secrets []webhook.Secret) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
		if err != nil {
			http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
			return
		}
		if err := webhook.Verify(r.Header, body, now(), 0, secrets...); err != nil {
			fmt.Fprintf(out, "REFUSED %s: %v\n", r.Header.Get(webhook.HeaderID), err)
			http.Error(w, "invalid signature: "+err.Error(), http.StatusUnauthorized)
			return
		}
		var ev struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(body, &ev)
		fmt.Fprintf(out, "verified %s %s (%d bytes)\n", ev.Type, r.Header.Get(webhook.HeaderID), len(body))
		w.WriteHeader(http.StatusNoContent)
	})
}
