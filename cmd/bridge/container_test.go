package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The container image and compose.yaml cannot be built or started here (no Docker engine): these
// tests keep them from rotting. scripts/container-check.sh, run by .ci/run, proves the binary
// they run.

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	line     int
	cmd, arg string
}

// dockerfile reads the repository's Dockerfile.
func dockerfile(t *testing.T) []instruction {
	t.Helper()
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var out []instruction
	var cur *instruction
	for n, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur == nil && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if cur == nil {
			cmd, arg, _ := strings.Cut(trimmed, " ")
			cur = &instruction{line: n + 1, cmd: strings.ToUpper(cmd), arg: strings.TrimSpace(arg)}
		} else if !strings.HasPrefix(trimmed, "#") {
			cur.arg += " " + trimmed
		}
		if strings.HasSuffix(cur.arg, "\\") {
			cur.arg = strings.TrimSpace(strings.TrimSuffix(cur.arg, "\\"))
			continue
		}
		out = append(out, *cur)
		cur = nil
	}
	return out
}

// pinnedImage matches an image pinned by version and digest: name:tag@sha256:<64 hex>.
var pinnedImage = regexp.MustCompile(`^[a-z0-9./-]+:([A-Za-z0-9._-]+)@sha256:[0-9a-f]{64}$`)

// TestDockerfileRules checks hadolint's rules by hand, and what the image promises: base images
// pinned by version and digest (none "latest"), the Go of go.mod in the build image, one USER and
// not root, COPY not ADD, absolute WORKDIRs, apt-get (if ever used) with
// --no-install-recommends and its lists removed, the build through scripts/build.sh, the
// HEALTHCHECK through bridge healthcheck, /data, port 8080 on every interface, labels, and bridge
// run as the default command.
func TestDockerfileRules(t *testing.T) {
	ins := dockerfile(t)
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goVersion := "?"
	if m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(gomod); m != nil {
		goVersion = string(m[1])
	}
	count := map[string]int{}
	joined := map[string]string{}
	stages := []string{}
	for _, in := range ins {
		count[in.cmd]++
		joined[in.cmd] += in.arg + "\n"
		switch in.cmd {
		case "FROM":
			f := strings.Fields(in.arg)
			if m := pinnedImage.FindStringSubmatch(f[0]); m == nil || m[1] == "latest" || slices.Contains(stages, f[0]) {
				t.Errorf("Dockerfile:%d: FROM %s: want an image pinned by version and digest (name:tag@sha256:…), never latest", in.line, f[0])
			}
			if strings.HasPrefix(f[0], "golang:") && !strings.HasPrefix(f[0], "golang:"+goVersion+"-") {
				t.Errorf("Dockerfile:%d: %s is not the Go of go.mod (%s): the golang image refuses another (GOTOOLCHAIN=local)", in.line, f[0], goVersion)
			}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				stages = append(stages, f[2])
			}
		case "USER":
			if u, _, _ := strings.Cut(in.arg, ":"); u == "root" || u == "0" {
				t.Errorf("Dockerfile:%d: USER %s: the image must not run as root", in.line, in.arg)
			}
		case "WORKDIR":
			if !strings.HasPrefix(in.arg, "/") {
				t.Errorf("Dockerfile:%d: WORKDIR %s is not absolute", in.line, in.arg)
			}
		case "RUN":
			if strings.Contains(in.arg, "apt-get install") && (!strings.Contains(in.arg, "--no-install-recommends") || !strings.Contains(in.arg, "rm -rf /var/lib/apt/lists")) {
				t.Errorf("Dockerfile:%d: apt-get install needs --no-install-recommends and rm -rf /var/lib/apt/lists/* in the same RUN", in.line)
			}
		}
	}
	for cmd, want := range map[string]int{"USER": 1, "ADD": 0, "HEALTHCHECK": 1, "ENTRYPOINT": 1, "CMD": 1, "EXPOSE": 1, "VOLUME": 1} {
		if count[cmd] != want {
			t.Errorf("Dockerfile has %d %s instruction(s), want %d", count[cmd], cmd, want)
		}
	}
	if len(stages) != count["FROM"]-1 {
		t.Errorf("Dockerfile: %d stage(s) named for %d FROM: want a multi-stage build whose build stages are named", len(stages), count["FROM"])
	}
	for cmd, want := range map[string]string{
		"RUN":         "scripts/build.sh /out/bridge",
		"HEALTHCHECK": `CMD ["/usr/local/bin/bridge", "healthcheck"]`,
		"ENTRYPOINT":  `["/usr/local/bin/bridge"]`,
		"CMD":         `["run", "--config", "/etc/bridge/bridge.yaml"]`,
		"EXPOSE":      "8080",
		"VOLUME":      `["/data"]`,
		"WORKDIR":     "/data",
		"ENV":         "BRIDGE_SERVER__ADDR=0.0.0.0:8080",
		"LABEL":       `org.opencontainers.image.revision="${COMMIT}"`,
		"COPY":        "configs/docker/bridge.yaml /etc/bridge/bridge.yaml",
	} {
		if !strings.Contains(joined[cmd], want) {
			t.Errorf("Dockerfile: no %s with %s", cmd, want)
		}
	}
	if !strings.Contains(joined["LABEL"], `org.opencontainers.image.version="${VERSION}"`) {
		t.Error("Dockerfile: no version label")
	}
	root := newRootCmd(io.Discard, io.Discard)
	for _, args := range [][]string{{"healthcheck"}, {"run", "--config", "x"}} {
		if c, _, err := root.Find(args); err != nil || c == root {
			t.Errorf("Dockerfile runs bridge %s, which does not exist", strings.Join(args, " "))
		}
	}
}

// TestDockerignore: the build context keeps what the build needs and leaves out local state.
func TestDockerignore(t *testing.T) {
	b, err := os.ReadFile("../../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			rules = append(rules, l)
		}
	}
	for _, want := range []string{".git", "data", "inbox", "bin"} {
		if !slices.Contains(rules, want) {
			t.Errorf(".dockerignore does not leave out %s", want)
		}
	}
	for _, needed := range []string{"go.mod", "go.sum", "scripts", "scripts/build.sh", "configs", "configs/docker/bridge.yaml", "cmd", "bridge", "sandbox"} {
		for _, r := range rules {
			if ok, _ := filepath.Match(r, needed); ok || r == needed || strings.HasPrefix(needed, r+"/") {
				t.Errorf(".dockerignore rule %q leaves out %s, which the build needs", r, needed)
			}
		}
	}
}

// TestContainerConfigs: the image's configuration and compose's load as bridge run loads them,
// with the variables the image and compose set.
func TestContainerConfigs(t *testing.T) {
	t.Setenv("BRIDGE_SERVER__ADDR", "0.0.0.0:8080")
	cfg, err := loadConfig("../../configs/docker/bridge.yaml", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Store.DSN != "./bridge.db" || cfg.Sources[0].Options["path"] != "./inbox" || cfg.Server.Addr != "0.0.0.0:8080" {
		t.Errorf("the image's configuration: store %q, inbox %v, server %q; want everything under the working directory /data, the server on every interface",
			cfg.Store.DSN, cfg.Sources[0].Options["path"], cfg.Server.Addr)
	}
	for _, env := range []map[string]string{{}, {"BRIDGE_BUS__DRIVER": "nats", "BRIDGE_BUS__URL": "nats://nats:4222"}} {
		for k, v := range env {
			t.Setenv(k, v)
		}
		cfg, err := loadConfig("../../configs/docker/postgres.yaml", true, nil)
		if err != nil {
			t.Fatalf("compose's configuration with %v: %v", env, err)
		}
		if cfg.Store.Driver != "postgres" || cfg.Store.DSNFile != "/run/secrets/bridge_dsn" || cfg.API.KeyFile != "/run/secrets/transcripts_key" {
			t.Errorf("compose's configuration: %+v %+v", cfg.Store, cfg.API)
		}
	}
}

// composeService is what TestComposeFile reads of a service.
type composeService struct {
	Image       string            `yaml:"image"`
	Profiles    []string          `yaml:"profiles"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	Secrets     []string          `yaml:"secrets"`
	DependsOn   map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
}

// interpolate replaces compose's ${VAR:-default} with its default.
func interpolate(s string) string {
	return regexp.MustCompile(`\$\{[A-Z_]+:-([^}]*)\}`).ReplaceAllString(s, "$1")
}

// TestComposeFile: compose.yaml runs PostgreSQL 15, the one-shot migrate the bridge waits for,
// and in the profile "replicas" NATS with JetStream and two replicas on it; every image is
// pinned, every file it mounts exists, and every bridge command it runs exists and loads its
// configuration.
func TestComposeFile(t *testing.T) {
	b, err := os.ReadFile("../../compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Services map[string]composeService        `yaml:"services"`
		Secrets  map[string]struct{ File string } `yaml:"secrets"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	s := f.Services
	pg, migrate, bridge, nats := s["db"], s["migrate"], s["bridge"], s["nats"]
	if !strings.HasPrefix(pg.Image, "postgres:15.") || len(pg.Profiles) > 0 {
		t.Errorf("db: %+v, want postgres:15 in the default profile", pg)
	}
	if !slices.Equal(migrate.Command, []string{"migrate", "--config", "/etc/bridge/bridge.yaml"}) || migrate.DependsOn["db"].Condition != "service_healthy" {
		t.Errorf("migrate: %+v, want bridge migrate once db is healthy", migrate)
	}
	if bridge.DependsOn["migrate"].Condition != "service_completed_successfully" || len(bridge.Profiles) > 0 {
		t.Errorf("bridge: %+v, want it after migrate completed, in the default profile", bridge)
	}
	if !strings.HasPrefix(nats.Image, "nats:2.10") || !slices.Contains(nats.Command, "-js") || !slices.Equal(nats.Profiles, []string{"replicas"}) {
		t.Errorf("nats: %+v, want nats:2.10 with -js in the profile replicas", nats)
	}
	replicas := 0
	for name, svc := range s {
		if m := pinnedImage.FindStringSubmatch(svc.Image); svc.Image != "" && !strings.HasPrefix(svc.Image, "transcript-bridge:") && (m == nil || m[1] == "latest") {
			t.Errorf("%s: image %s is not pinned by version and digest", name, svc.Image)
		}
		if strings.HasPrefix(svc.Image, "transcript-bridge:") && svc.Environment["BRIDGE_BUS__DRIVER"] == "nats" {
			replicas++
			if !slices.Equal(svc.Profiles, []string{"replicas"}) || svc.DependsOn["nats"].Condition == "" || svc.DependsOn["migrate"].Condition != "service_completed_successfully" {
				t.Errorf("%s: %+v, want a replica of the profile replicas, after nats and migrate", name, svc)
			}
		}
		for _, v := range svc.Volumes {
			if host, _, _ := strings.Cut(v, ":"); strings.HasPrefix(host, "./") {
				if _, err := os.Stat(filepath.Join("../..", host)); err != nil {
					t.Errorf("%s mounts %s, which does not exist", name, host)
				}
			}
		}
		for _, sec := range svc.Secrets {
			if _, ok := f.Secrets[sec]; !ok {
				t.Errorf("%s uses the secret %s, which compose.yaml does not define", name, sec)
			}
		}
		if strings.HasPrefix(svc.Image, "transcript-bridge:") && len(svc.Command) > 0 {
			root := newRootCmd(io.Discard, io.Discard)
			c, rest, err := root.Find(svc.Command)
			if err == nil {
				err = c.ParseFlags(rest)
			}
			if err != nil || c == root {
				t.Errorf("%s runs bridge %s: %v", name, strings.Join(svc.Command, " "), err)
			}
		}
	}
	if replicas != 2 {
		t.Errorf("compose.yaml has %d replica(s) on NATS, want 2", replicas)
	}
	for name, sec := range f.Secrets {
		if _, err := os.Stat(filepath.Join("../..", sec.File)); err != nil {
			t.Errorf("secret %s: %v", name, err)
		}
	}
	dsn, _ := os.ReadFile("../../configs/docker/secrets/bridge_dsn")
	password, _ := os.ReadFile("../../configs/docker/secrets/postgres_password")
	if p := strings.TrimSpace(string(password)); p == "" || !strings.Contains(string(dsn), ":"+p+"@db:5432/bridge") {
		t.Errorf("the DSN secret %q does not hold the password of the db service's secret", dsn)
	}
	for _, svc := range []composeService{bridge, s["replica-1"]} {
		for k, v := range svc.Environment {
			t.Setenv(k, interpolate(v))
		}
		if _, err := loadConfig("../../configs/docker/postgres.yaml", true, nil); err != nil {
			t.Errorf("compose's configuration with %v: %v", svc.Environment, err)
		}
	}
}
