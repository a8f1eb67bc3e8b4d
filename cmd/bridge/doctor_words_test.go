package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctorWords (issue 31, point 10): a receiver's body after a 500 is quoted as its answer,
// not read as the doctor's verdict; allow_private: true is suggested only when it is not set.
func TestDoctorWords(t *testing.T) {
	rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, "ok")
	}))
	defer rx.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a port nothing answers on once closed
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/in"
	ln.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "bridge.db")
	hooks := fmt.Sprintf("webhooks:\n"+
		"  - {name: says-ok, url: %q, secret: %q, allow_private: true}\n"+
		"  - {name: dead-private, url: %q, secret: %q, allow_private: true}\n"+
		"  - {name: dead-refused, url: %q, secret: %q}\n", rx.URL+"/in", receiverSecret, dead, receiverSecret, dead, receiverSecret)
	r, _ := doctorJSON(t, dir, localConfig(t, dir, db, hooks))
	if c := r.find(t, checkFail, "webhook says-ok"); !strings.HasPrefix(c.Detail, "the receiver at "+rx.URL+"/in answered 500 with body \"ok\" to a signed ping") {
		t.Errorf("webhook says-ok: detail %q, want the receiver's body quoted as its answer", c.Detail)
	}
	if c := r.find(t, checkFail, "webhook dead-private"); strings.Contains(c.Fix, "needs allow_private: true") {
		t.Errorf("webhook dead-private (allow_private already true): fix %q suggests setting it", c.Fix)
	}
	if c := r.find(t, checkFail, "webhook dead-refused"); !strings.Contains(c.Fix, "needs allow_private: true") {
		t.Errorf("webhook dead-refused (a loopback address without allow_private): fix %q, want allow_private suggested", c.Fix)
	}
}
