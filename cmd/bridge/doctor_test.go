package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/transcript-bridge/bridge/bridge/relay/webhook"
	"github.com/transcript-bridge/bridge/bridge/sqlite"
	"github.com/transcript-bridge/bridge/internal/natstest"
	"github.com/transcript-bridge/bridge/internal/pgtest"
)

// doctorJSON runs bridge doctor -o json with the configuration text (written to dir) and
// returns its report and exit code.
func doctorJSON(t *testing.T, dir, config string, args ...string) (doctorReport, int) {
	t.Helper()
	path := filepath.Join(dir, "bridge.yaml")
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Run(context.Background(), append([]string{"doctor", "--config", path, "-o", "json"}, args...), &out, &errb)
	var r doctorReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("doctor -o json: %v\nstdout: %s\nstderr: %s", err, out.String(), errb.String())
	}
	return r, code
}

// find returns the first check named name with status, failing the test when there is none.
func (r doctorReport) find(t *testing.T, status, name string) doctorCheck {
	t.Helper()
	for _, c := range r.Items {
		if c.Status == status && c.Check == name {
			return c
		}
	}
	t.Fatalf("no %s check %q in %+v", status, name, r.Items)
	return doctorCheck{}
}

// localConfig is a configuration with one folder source and the SQLite store at db, plus extra
// YAML.
func localConfig(t *testing.T, dir, db, extra string) string {
	t.Helper()
	inbox := filepath.Join(dir, "inbox")
	if err := os.MkdirAll(inbox, 0o755); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("store: {dsn: %q}\nsources: [{name: inbox, type: localdir, path: %q, author: \"email:owner@acme.test\"}]\n%s", db, inbox, extra)
}

func TestDoctorTable(t *testing.T) {
	r := &doctorReport{}
	r.ok("config", "bridge.yaml")
	r.fail("api key", "missing scope reports:write", "create a key with reports:write")
	r.warn("store", "schema version 6,\nthis bridge carries 8", "run bridge migrate")
	var b bytes.Buffer
	r.table(&b)
	want := "ok    config  bridge.yaml\n" +
		"FAIL  api key  missing scope reports:write — create a key with reports:write\n" +
		"warn  store  schema version 6, this bridge carries 8 — run bridge migrate\n"
	if b.String() != want || r.Failed != 1 || r.Warnings != 1 {
		t.Errorf("table =\n%s(failed %d, warnings %d), want\n%s", b.String(), r.Failed, r.Warnings, want)
	}
}

// TestDoctorSchemaVersions: a current store passes, one that a newer bridge migrated fails,
// one with migrations pending warns; none is migrated by the doctor.
func TestDoctorSchemaVersions(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "bridge.db")
	s, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	cfg := localConfig(t, dir, db, "")
	r, code := doctorJSON(t, dir, cfg)
	if c := r.find(t, checkOK, "store"); code != 0 || !strings.Contains(c.Detail, "current") {
		t.Errorf("current store: exit %d, %+v", code, r.Items)
	}
	r.find(t, checkWarn, "api") // no api.base_url: the in-process sandbox, not started here
	r.find(t, checkOK, "bus")

	raw, err := sql.Open("sqlite3", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, 1)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	r, code = doctorJSON(t, dir, cfg)
	if c := r.find(t, checkFail, "store"); code != 1 || !strings.Contains(c.Detail, "schema version 9999 is newer") {
		t.Errorf("newer store: exit %d, %+v", code, c)
	}

	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r, code = doctorJSON(t, dir, localConfig(t, dir, empty, ""))
	if c := r.find(t, checkWarn, "store"); code != 0 || !strings.Contains(c.Detail, "schema version 0, this bridge carries") || !strings.Contains(c.Fix, "bridge migrate") {
		t.Errorf("store with migrations pending: exit %d, %+v", code, c)
	}
	if fi, err := os.Stat(empty); err != nil || fi.Size() != 0 {
		t.Errorf("the doctor changed the database with migrations pending: %v, %v", fi, err)
	}
}

// TestDoctorWebhookPing: the ping is signed with the endpoint's secret and verifies at the
// receiver; an endpoint the relay disabled is named with the command that enables it again.
func TestDoctorWebhookPing(t *testing.T) {
	secret, err := webhook.ParseSecret(receiverSecret)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}
	rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := webhook.Verify(r.Header, body, time.Now(), 0, secret); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		json.Unmarshal(body, &got)
	}))
	defer rx.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "bridge.db")
	s, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DisableEndpoint(context.Background(), "crm", "answered 410 Gone", time.Now()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	hooks := fmt.Sprintf("webhooks: [{name: crm, url: %q, secret: %q, allow_private: true, events: [transcription.failed]}]\n", rx.URL+"/in", receiverSecret)
	r, code := doctorJSON(t, dir, localConfig(t, dir, db, hooks))
	if code != 0 {
		t.Errorf("exit %d, want 0 (a disabled endpoint is a warning): %+v", code, r.Items)
	}
	if c := r.find(t, checkWarn, "webhook crm"); !strings.Contains(c.Detail, "answered 410 Gone") || c.Fix != "once the receiver is fixed: bridge endpoints enable crm" {
		t.Errorf("disabled endpoint: %+v", c)
	}
	r.find(t, checkOK, "webhook crm")
	if got.Type != "ping" || got.Data["endpoint"] != "crm" {
		t.Errorf("the receiver verified %+v, want a ping for crm (sent whatever the endpoint's events)", got)
	}
}

// TestDoctorNATS: a NATS server with JetStream passes the bus check.
func TestDoctorNATS(t *testing.T) {
	url := natstest.Embedded(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "bridge.db")
	bus := fmt.Sprintf("bus: {driver: nats, url: %q, subject_prefix: %q}\n", url, natstest.Prefix(t, url))
	r, _ := doctorJSON(t, dir, localConfig(t, dir, db, bus))
	if c := r.find(t, checkOK, "bus"); !strings.HasPrefix(c.Detail, "nats: JetStream answers") {
		t.Errorf("bus: %+v", c)
	}
	r.find(t, checkFail, "store") // no database: not created
	if _, err := os.Stat(db); err == nil {
		t.Error("the doctor created the SQLite database")
	}
}

// TestDoctorPostgres: a PostgreSQL store whose DSN is in a file, before and after bridge
// migrate; the password is never shown.
func TestDoctorPostgres(t *testing.T) {
	dsn := strings.Replace(pgtest.New(t), "postgres://postgres@", "postgres://postgres:s3cret-pw@", 1)
	dir := t.TempDir()
	dsnFile := filepath.Join(dir, "dsn")
	if err := os.WriteFile(dsnFile, []byte(dsn), 0o600); err != nil {
		t.Fatal(err)
	}
	inbox := filepath.Join(dir, "inbox")
	os.MkdirAll(inbox, 0o755)
	cfg := fmt.Sprintf("store: {driver: postgres, dsn_file: %q}\nsources: [{name: inbox, type: localdir, path: %q, author: \"email:o@acme.test\"}]\n", dsnFile, inbox)
	r, _ := doctorJSON(t, dir, cfg)
	r.find(t, checkWarn, "store") // a fresh database: schema version 0
	var out bytes.Buffer
	if code := Run(context.Background(), []string{"migrate", "--config", filepath.Join(dir, "bridge.yaml")}, &out, &out); code != 0 {
		t.Fatalf("migrate: exit %d: %s", code, out.String())
	}
	r, code := doctorJSON(t, dir, cfg)
	if c := r.find(t, checkOK, "store"); code != 0 || !strings.Contains(c.Detail, "postgres (dsn in "+dsnFile+")") {
		t.Errorf("exit %d, store %+v", code, c)
	}
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), "s3cret-pw") {
		t.Errorf("the report shows the password: %s", b)
	}
}

// TestDoctorWarnsOfAReadableStore: a store made before its files were private (0644 in a 0755
// folder) is a warning naming the path and the chmod.
func TestDoctorWarnsOfAReadableStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	os.MkdirAll(dir, 0o755)
	os.Chmod(dir, 0o755)
	db := filepath.Join(dir, "bridge.db")
	os.WriteFile(db, nil, 0o644)
	os.Chmod(db, 0o644)
	cfg := &Config{}
	cfg.Store.Driver, cfg.Store.DSN = "sqlite", db
	r := &doctorReport{}
	doctorStoreMode(cfg, r)
	if len(r.Items) != 2 || r.Items[1].Status != checkWarn || !strings.Contains(r.Items[1].Detail, db) || !strings.Contains(r.Items[1].Fix, "chmod go-rwx") {
		t.Errorf("doctorStoreMode = %+v, want a warning for the folder and one for the file, each with its chmod", r.Items)
	}
	os.Chmod(dir, 0o700)
	os.Chmod(db, 0o600)
	r = &doctorReport{}
	if doctorStoreMode(cfg, r); len(r.Items) != 0 {
		t.Errorf("doctorStoreMode on a private store = %+v, want nothing", r.Items)
	}
}
