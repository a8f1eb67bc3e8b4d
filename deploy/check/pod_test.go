package check

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// A container of the chart, run on loopback: its arguments, working directory, environment and
// files as the rendered spec gives them, each volume a folder of the test's (an emptyDir, the
// ConfigMap's keys, a Secret's files), the listeners moved to free loopback ports.

// pod is a container's volumes laid out as folders, and its ports on loopback.
type pod struct {
	root   string
	mounts map[string]string // mount path → local folder
	ports  map[string]int    // port name → local port
	// localize rewrites the container's view into the test's: each absolute path on a volume
	// into its folder, each 0.0.0.0:<container port> into 127.0.0.1:<local port>.
	localize *strings.Replacer
}

// layout makes a folder for each volume c mounts, and writes the ConfigMaps' keys into theirs;
// secrets (path in the container → content) fill the Secret volumes.
func layout(t *testing.T, o *objects, spec *corev1.PodSpec, c *corev1.Container, secrets map[string]string) *pod {
	t.Helper()
	p := &pod{root: t.TempDir(), mounts: map[string]string{}, ports: map[string]int{}}
	// Outer mounts first: a mount inside another (/data/inbox in /data) is a folder inside the
	// outer one's, as the container sees it.
	ms := slices.Clone(c.VolumeMounts)
	slices.SortFunc(ms, func(a, b corev1.VolumeMount) int { return len(a.MountPath) - len(b.MountPath) })
	for i, m := range ms {
		dir := filepath.Join(p.root, fmt.Sprintf("v%d-%s", i, m.Name))
		if outer, rel := mountOf(c, m.MountPath); outer != nil {
			dir = filepath.Join(p.mounts[outer.MountPath], rel)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		p.mounts[m.MountPath] = dir
	}
	var pairs []string
	for _, m := range slices.Backward(ms) { // inner mounts first
		pairs = append(pairs, m.MountPath+"/", p.mounts[m.MountPath]+"/")
	}
	for _, cp := range c.Ports {
		p.ports[cp.Name] = freePort(t)
		pairs = append(pairs, fmt.Sprintf("0.0.0.0:%d", cp.ContainerPort), fmt.Sprintf("127.0.0.1:%d", p.ports[cp.Name]))
	}
	p.localize = strings.NewReplacer(pairs...)
	// The ConfigMaps' keys, as the container would read them.
	for _, m := range ms {
		if v := volume(t, spec, m.Name); v.ConfigMap != nil {
			for k, text := range o.configMaps[v.ConfigMap.Name].Data {
				if err := os.WriteFile(filepath.Join(p.mounts[m.MountPath], k), []byte(p.localize.Replace(text)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for file, content := range secrets {
		local := p.local(t, c, file)
		if err := os.WriteFile(local, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// local is the local path of a path inside the container (which must be on a volume).
func (p *pod) local(t *testing.T, c *corev1.Container, path string) string {
	t.Helper()
	if dir, ok := p.mounts[path]; ok {
		return dir
	}
	m, rel := mountOf(c, path)
	if m == nil {
		t.Fatalf("%s: %s is on no volume", c.Name, path)
	}
	return filepath.Join(p.mounts[m.MountPath], rel)
}

// run starts c's command: its args with container paths made local, in its working
// directory's folder, with its environment (plain values only, localized) and TMPDIR on /tmp's
// volume.
func (p *pod) run(t *testing.T, c *corev1.Container) *process {
	t.Helper()
	var env []string
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			t.Fatalf("%s: variable %s comes from %+v: not run here", c.Name, e.Name, e.ValueFrom)
		}
		env = append(env, e.Name+"="+p.localize.Replace(e.Value))
	}
	env = append(env, "TMPDIR="+p.local(t, c, "/tmp"))
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		if strings.HasPrefix(a, "/") {
			a = p.local(t, c, a)
		}
		args[i] = a
	}
	return start(t, p.local(t, c, c.WorkingDir), env, args...)
}

// TestDefaultPodRuns runs the Deployment of the chart's defaults as Kubernetes would: its
// startup and liveness probes answer on the port named http, its readiness probe on the port
// named metrics, /metrics is there and not on the public port, a recording copied into the
// inbox volume is uploaded, and SIGTERM stops it within its grace period.
func TestDefaultPodRuns(t *testing.T) {
	o := collect(render(t, renders[0].args()))
	spec := &o.deployments[0].Spec.Template.Spec
	c := container(t, spec, "bridge")
	p := layout(t, o, spec, c, nil)
	ports := p.ports
	proc := p.run(t, c)
	probe := func(pr *corev1.Probe) string {
		return fmt.Sprintf("http://127.0.0.1:%d%s", ports[pr.HTTPGet.Port.String()], pr.HTTPGet.Path)
	}
	for _, pr := range []*corev1.Probe{c.StartupProbe, c.LivenessProbe, c.ReadinessProbe} {
		waitFor(t, proc, "GET "+probe(pr), func() (bool, string) {
			status, body, err := get(probe(pr))
			return status == http.StatusOK, fmt.Sprintf("%d %s %v", status, body, err)
		})
	}
	if status, _, _ := get(fmt.Sprintf("http://127.0.0.1:%d/metrics", ports["http"])); status == http.StatusOK {
		t.Errorf("GET /metrics on the port named http = 200: the Ingress's port would serve the metrics")
	}
	copyFile(t, "sandbox/testdata/media/speech.wav", filepath.Join(p.local(t, c, "/data/inbox"), "speech.wav"))
	waitFor(t, proc, "the recording copied into the inbox to be done", func() (bool, string) {
		s, err := scrape(fmt.Sprintf("http://127.0.0.1:%d/metrics", ports["metrics"]))
		if err != nil {
			return false, err.Error()
		}
		for _, m := range s["bridge_jobs"].GetMetric() {
			if m.Label[0].GetValue() == "done" && m.GetGauge().GetValue() > 0 {
				return true, ""
			}
		}
		return false, "no job done"
	})
	took := proc.stop(t, time.Duration(*spec.TerminationGracePeriodSeconds)*time.Second)
	t.Logf("stopped %v after SIGTERM (terminationGracePeriodSeconds %d)", took.Round(time.Millisecond), *spec.TerminationGracePeriodSeconds)
}

// TestMigrationJobRuns runs the migration Job of the PostgreSQL values on a fresh database of
// the test server: it migrates, and run again (the next upgrade's hook) it has nothing to do.
func TestMigrationJobRuns(t *testing.T) {
	dsn := testDatabase(t)
	o := collect(render(t, renders[1].args()))
	spec := &o.jobs[0].Spec.Template.Spec
	c := container(t, spec, "migrate")
	cfg := o.bridgeConfig(t, configMapOf(t, spec, c, configPath))
	secrets := map[string]string{}
	for key, file := range fileSettings(cfg, "") {
		if m, _ := mountOf(c, file); m != nil && volume(t, spec, m.Name).Projected != nil {
			secrets[file] = "not-read-by-migrate-" + key
		}
	}
	secrets[dig(cfg, "store", "dsn_file").(string)] = dsn + "\n"
	p := layout(t, o, spec, c, secrets)
	for i, want := range []string{"(was 0)", "up to date"} {
		proc := p.run(t, c)
		<-proc.done
		if proc.err != nil || !strings.Contains(proc.log.String(), want) {
			t.Fatalf("migrate run %d: %v, output %q; want success saying %q", i+1, proc.err, proc.log, want)
		}
		t.Logf("migrate run %d: %s", i+1, strings.TrimSpace(proc.log.String()))
	}
}

// testDatabase creates a fresh database on the test server (BRIDGE_TEST_POSTGRES_DSN, as the
// bridge's own tests do) and drops it when the test ends. Without the variable the test is
// skipped, except under CI, where it fails.
func testDatabase(t *testing.T) string {
	t.Helper()
	base := os.Getenv("BRIDGE_TEST_POSTGRES_DSN")
	if base == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("BRIDGE_TEST_POSTGRES_DSN is not set (.ci/run sets it)")
		}
		t.Skip("BRIDGE_TEST_POSTGRES_DSN is not set")
	}
	name := fmt.Sprintf("deploycheck_%d", time.Now().UnixNano())
	psql := func(sql string) {
		if out, err := exec.Command("psql", "-q", "-v", "ON_ERROR_STOP=1", base, "-c", sql).CombinedOutput(); err != nil {
			t.Fatalf("psql %q: %v: %s", sql, err, out)
		}
	}
	psql("CREATE DATABASE " + name)
	t.Cleanup(func() { psql("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)") })
	prefix, query, _ := strings.Cut(base, "?")
	dsn := prefix[:strings.LastIndex(prefix, "/")+1] + name
	if query != "" {
		dsn += "?" + query
	}
	return dsn
}
