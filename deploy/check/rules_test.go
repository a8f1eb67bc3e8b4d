package check

import (
	"fmt"
	"net"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// configPath is where the bridge's containers read bridge.yaml: the image's own path.
const configPath = "/etc/bridge/bridge.yaml"

// minGrace is the least terminationGracePeriodSeconds the chart may set (values.schema.json's
// minimum): after SIGTERM the relay records its attempts and gives back its deliveries (5 s at
// most), the replica gives up its leases (5 s at most each, in parallel) and closes the store;
// the rest is margin for a slow database.
const minGrace = 30

// container returns the container name of spec.
func container(t *testing.T, spec *corev1.PodSpec, name string) *corev1.Container {
	t.Helper()
	for i := range spec.Containers {
		if spec.Containers[i].Name == name {
			return &spec.Containers[i]
		}
	}
	t.Fatalf("no container %q", name)
	return nil
}

// checkDeployment: the replicas and the image from values, SQLite only alone, a non-root
// read-only container with /data and /tmp as volumes, bridge run on the ConfigMap's bridge.yaml,
// liveness on /healthz and readiness on /readyz at the ports the bridge listens on, and a grace
// long enough to give the leases back.
func checkDeployment(t *testing.T, o *objects, rc renderCase) {
	d := o.deployments[0]
	spec := &d.Spec.Template.Spec
	c := container(t, spec, "bridge")
	cfg := o.bridgeConfig(t, configMapOf(t, spec, c, configPath))
	driver, _ := dig(cfg, "store", "driver").(string)
	if got := *d.Spec.Replicas; got != rc.replicas || driver != rc.driver {
		t.Errorf("replicas, store.driver = %d, %q, want %d, %q", got, driver, rc.replicas, rc.driver)
	}
	if *d.Spec.Replicas > 1 && driver != "postgres" {
		t.Errorf("%d replicas on store.driver %q: only postgres is shared", *d.Spec.Replicas, driver)
	}
	if driver == "sqlite" && d.Spec.Strategy.Type != "Recreate" {
		t.Errorf("strategy = %q with SQLite, want Recreate (two processes on one file)", d.Spec.Strategy.Type)
	}
	if want := []string{"run", "--config", configPath}; !slices.Equal(c.Args, want) || len(c.Command) > 0 {
		t.Errorf("command, args = %q, %q, want the image's entrypoint with %q", c.Command, c.Args, want)
	}
	checkPodSecurity(t, spec, c)
	if c.WorkingDir != "/data" {
		t.Errorf("workingDir = %q, want /data (the image's, where relative paths land)", c.WorkingDir)
	}
	data := volumeAt(t, spec, c, "/data")
	if driver == "sqlite" && data.PersistentVolumeClaim == nil {
		t.Errorf("/data is %+v with SQLite, want a PersistentVolumeClaim (bridge.db is there)", data.VolumeSource)
	}
	if data.PersistentVolumeClaim == nil && data.EmptyDir == nil {
		t.Errorf("/data is %+v, want a claim or an emptyDir", data.VolumeSource)
	}
	if tmp := volumeAt(t, spec, c, "/tmp"); tmp.EmptyDir == nil {
		t.Errorf("/tmp is %+v, want an emptyDir (the root filesystem is read-only)", tmp.VolumeSource)
	}
	checkProbes(t, c, cfg)
	if g := spec.TerminationGracePeriodSeconds; g == nil || *g < minGrace {
		t.Errorf("terminationGracePeriodSeconds = %s, want at least %d", show(g), minGrace)
	}
	if a := spec.AutomountServiceAccountToken; a == nil || *a {
		t.Errorf("automountServiceAccountToken = %s, want false: the bridge calls no Kubernetes API", show(a))
	}
	checkSecretFiles(t, "Deployment", spec, c, cfg)
}

// checkPodSecurity: never root, no privilege escalation, no capability, a read-only root
// filesystem, the runtime's seccomp profile; read-only mounts for what only is read.
func checkPodSecurity(t *testing.T, spec *corev1.PodSpec, c *corev1.Container) {
	t.Helper()
	ps, s := spec.SecurityContext, c.SecurityContext
	if ps == nil || s == nil {
		t.Fatalf("%s: securityContext missing (pod %v, container %v)", c.Name, ps, s)
	}
	isTrue := func(b *bool) bool { return b != nil && *b }
	switch {
	case !isTrue(ps.RunAsNonRoot) || !isTrue(s.RunAsNonRoot):
		t.Errorf("%s: runAsNonRoot = %s, %s, want true", c.Name, show(ps.RunAsNonRoot), show(s.RunAsNonRoot))
	case ps.RunAsUser == nil || *ps.RunAsUser == 0:
		t.Errorf("%s: runAsUser = %s, want the image's user 65532", c.Name, show(ps.RunAsUser))
	case !isTrue(s.ReadOnlyRootFilesystem):
		t.Errorf("%s: readOnlyRootFilesystem = %s, want true", c.Name, show(s.ReadOnlyRootFilesystem))
	case s.AllowPrivilegeEscalation == nil || *s.AllowPrivilegeEscalation:
		t.Errorf("%s: allowPrivilegeEscalation = %s, want false", c.Name, show(s.AllowPrivilegeEscalation))
	case isTrue(s.Privileged):
		t.Errorf("%s: privileged", c.Name)
	case s.Capabilities == nil || !slices.Contains(s.Capabilities.Drop, "ALL") || len(s.Capabilities.Add) > 0:
		t.Errorf("%s: capabilities = %+v, want drop ALL and none added", c.Name, s.Capabilities)
	case s.SeccompProfile == nil || s.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Errorf("%s: seccompProfile = %+v, want RuntimeDefault", c.Name, s.SeccompProfile)
	case ps.FSGroup == nil:
		t.Errorf("%s: fsGroup unset: a new volume would not be writable by the user", c.Name)
	}
	for _, m := range c.VolumeMounts {
		v := volume(t, spec, m.Name)
		if (v.ConfigMap != nil || v.Secret != nil || v.Projected != nil) && !m.ReadOnly {
			t.Errorf("%s: %s (%s) is mounted writable, want readOnly", c.Name, m.MountPath, m.Name)
		}
	}
}

// checkProbes: liveness and startup GET /healthz on the main listener (BRIDGE_SERVER__ADDR's
// port), readiness GET /readyz on the metrics listener (server.metrics_addr's port), where the
// bridge serves them; the named ports are the container's.
func checkProbes(t *testing.T, c *corev1.Container, cfg map[string]any) {
	t.Helper()
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if addr := env(c, "BRIDGE_SERVER__ADDR"); portOf(addr) != ports["http"] || !strings.HasPrefix(addr, "0.0.0.0:") {
		t.Errorf("BRIDGE_SERVER__ADDR = %q, want 0.0.0.0 and the port named http (%d)", addr, ports["http"])
	}
	metricsAddr, _ := dig(cfg, "server", "metrics_addr").(string)
	if portOf(metricsAddr) != ports["metrics"] || ports["metrics"] == ports["http"] {
		t.Errorf("server.metrics_addr = %q, want the port named metrics (%d), apart from http", metricsAddr, ports["metrics"])
	}
	for _, p := range []struct {
		what       string
		probe      *corev1.Probe
		path, port string
	}{
		{"livenessProbe", c.LivenessProbe, "/healthz", "http"},
		{"startupProbe", c.StartupProbe, "/healthz", "http"},
		{"readinessProbe", c.ReadinessProbe, "/readyz", "metrics"},
	} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("%s: missing or not an HTTP GET", p.what)
			continue
		}
		g := p.probe.HTTPGet
		if g.Path != p.path || g.Port.String() != p.port {
			t.Errorf("%s = GET %s on %s, want GET %s on %s", p.what, g.Path, g.Port.String(), p.path, p.port)
		}
		if p.probe.TimeoutSeconds < 2 {
			t.Errorf("%s: timeoutSeconds = %d: /readyz gives each check 2 s", p.what, p.probe.TimeoutSeconds)
		}
	}
}

// show prints what a pointer field holds, or that it is unset.
func show[T any](p *T) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

// env returns the value of variable name in c's environment ("" when unset).
func env(c *corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// portOf returns the port of host:port, 0 when there is none.
func portOf(addr string) int32 {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(p)
	return int32(n)
}

// volume returns the volume name of spec.
func volume(t *testing.T, spec *corev1.PodSpec, name string) *corev1.Volume {
	t.Helper()
	for i := range spec.Volumes {
		if spec.Volumes[i].Name == name {
			return &spec.Volumes[i]
		}
	}
	t.Fatalf("volume %q is mounted but not defined", name)
	return nil
}

// volumeAt returns the volume c mounts at exactly dir.
func volumeAt(t *testing.T, spec *corev1.PodSpec, c *corev1.Container, dir string) *corev1.Volume {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if m.MountPath == dir {
			return volume(t, spec, m.Name)
		}
	}
	t.Fatalf("%s: nothing mounted at %s", c.Name, dir)
	return nil
}

// mountOf returns the mount of c holding file (the longest mount path that contains it), and
// the file's path inside the volume.
func mountOf(c *corev1.Container, file string) (*corev1.VolumeMount, string) {
	var best *corev1.VolumeMount
	for i, m := range c.VolumeMounts {
		if strings.HasPrefix(file, strings.TrimSuffix(m.MountPath, "/")+"/") && (best == nil || len(m.MountPath) > len(best.MountPath)) {
			best = &c.VolumeMounts[i]
		}
	}
	if best == nil {
		return nil, ""
	}
	return best, strings.TrimPrefix(file, strings.TrimSuffix(best.MountPath, "/")+"/")
}

// configMapOf returns the ConfigMap c reads file from (a configMap volume holding its key).
func configMapOf(t *testing.T, spec *corev1.PodSpec, c *corev1.Container, file string) string {
	t.Helper()
	m, rel := mountOf(c, file)
	if m == nil {
		t.Fatalf("%s: %s is on no volume", c.Name, file)
	}
	v := volume(t, spec, m.Name)
	if v.ConfigMap == nil || rel != path.Base(file) {
		t.Fatalf("%s: %s is on volume %s (%+v), want a ConfigMap's key %s", c.Name, file, m.Name, v.VolumeSource, path.Base(file))
	}
	return v.ConfigMap.Name
}
