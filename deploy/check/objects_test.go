package check

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// hookAnnotations are Helm's hook annotations of an object.
type hookAnnotations struct {
	events []string
	weight int
	delete []string
}

func hookOf(annotations map[string]string) hookAnnotations {
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, ",")
	}
	w, _ := strconv.Atoi(annotations["helm.sh/hook-weight"])
	return hookAnnotations{events: split(annotations["helm.sh/hook"]), weight: w, delete: split(annotations["helm.sh/hook-delete-policy"])}
}

// checkMigrationHook: with PostgreSQL, bridge migrate runs as a Job before install and before
// every upgrade, from the replicas' image, on a copy of their bridge.yaml that exists before it
// (a hook of lower weight: hooks run before the release's own ConfigMap exists) and with the
// DSN's Secret; its pod is not one the Service or the budget selects. With SQLite there is none
// (bridge run migrates its own file; a Job could not share the volume before install).
func checkMigrationHook(t *testing.T, o *objects, rc renderCase) {
	t.Helper()
	if rc.driver != "postgres" {
		return
	}
	d, j := o.deployments[0], o.jobs[0]
	jh := hookOf(j.Annotations)
	for _, ev := range []string{"pre-install", "pre-upgrade"} {
		if !slices.Contains(jh.events, ev) {
			t.Errorf("Job %s: helm.sh/hook = %q, want %s among them", j.Name, jh.events, ev)
		}
	}
	if !slices.Contains(jh.delete, "before-hook-creation") {
		t.Errorf("Job %s: hook-delete-policy = %q: without before-hook-creation the next upgrade cannot create it again", j.Name, jh.delete)
	}
	spec := &j.Spec.Template.Spec
	c := container(t, spec, "migrate")
	if want := []string{"migrate", "--config", configPath}; !slices.Equal(c.Args, want) {
		t.Errorf("Job: args = %q, want %q (compose's migrate service)", c.Args, want)
	}
	if img := container(t, &d.Spec.Template.Spec, "bridge").Image; c.Image != img {
		t.Errorf("Job: image = %q, want the replicas' %q", c.Image, img)
	}
	if spec.RestartPolicy != corev1.RestartPolicyNever && spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		t.Errorf("Job: restartPolicy = %q", spec.RestartPolicy)
	}
	checkPodSecurity(t, spec, c)
	cmName := configMapOf(t, spec, c, configPath)
	cm := o.configMaps[cmName]
	ch := hookOf(cm.Annotations)
	if !slices.Equal(ch.events, jh.events) || ch.weight >= jh.weight {
		t.Errorf("ConfigMap %s: hook %q weight %d, want the Job's events %q at a lower weight than %d", cmName, ch.events, ch.weight, jh.events, jh.weight)
	}
	main := configMapOf(t, &d.Spec.Template.Spec, container(t, &d.Spec.Template.Spec, "bridge"), configPath)
	if cm.Data["bridge.yaml"] != o.configMaps[main].Data["bridge.yaml"] {
		t.Errorf("the Job's bridge.yaml (%s) differs from the replicas' (%s)", cmName, main)
	}
	cfg := o.bridgeConfig(t, cmName)
	if f, _ := dig(cfg, "store", "dsn_file").(string); f == "" {
		t.Errorf("Job: store.dsn_file unset: the DSN must come from a Secret")
	}
	checkSecretFiles(t, "Job", spec, c, cfg)
	pod := j.Spec.Template.Labels
	if subset(o.services[0].Spec.Selector, pod) {
		t.Errorf("the Service selects the Job's pod (%s): traffic would go to migrate", fmtLabels(pod))
	}
	if len(o.pdbs) == 1 && subset(o.pdbs[0].Spec.Selector.MatchLabels, pod) {
		t.Errorf("the PodDisruptionBudget counts the Job's pod (%s)", fmtLabels(pod))
	}
}

// checkService: it selects the replicas and forwards to their named ports http and metrics.
func checkService(t *testing.T, o *objects) {
	t.Helper()
	s, d := o.services[0], o.deployments[0]
	pod := d.Spec.Template.Labels
	if !subset(s.Spec.Selector, pod) || !subset(d.Spec.Selector.MatchLabels, pod) {
		t.Errorf("Service selector %s, Deployment selector %s: want both to select the pods (%s)", fmtLabels(s.Spec.Selector), fmtLabels(d.Spec.Selector.MatchLabels), fmtLabels(pod))
	}
	c := container(t, &d.Spec.Template.Spec, "bridge")
	var names []string
	for _, p := range s.Spec.Ports {
		names = append(names, p.Name)
		if p.TargetPort.Type != intstr.String || !slices.ContainsFunc(c.Ports, func(cp corev1.ContainerPort) bool { return cp.Name == p.TargetPort.StrVal }) {
			t.Errorf("Service port %s targets %s, not a named port of the container", p.Name, p.TargetPort.String())
		}
	}
	if !slices.Contains(names, "http") || !slices.Contains(names, "metrics") {
		t.Errorf("Service ports = %q, want http and metrics", names)
	}
}

// checkIngress: from outside, only the Service's http port (the sources' webhooks, the status
// page), never metrics (/metrics, /readyz).
func checkIngress(t *testing.T, o *objects) {
	t.Helper()
	for _, in := range o.ingresses {
		for _, r := range in.Spec.Rules {
			if r.HTTP == nil {
				t.Errorf("Ingress %s: rule %q has no paths", in.Name, r.Host)
				continue
			}
			for _, p := range r.HTTP.Paths {
				b := p.Backend.Service
				if b == nil || b.Name != o.services[0].Name || b.Port.Name != "http" {
					t.Errorf("Ingress %s: %s%s goes to %+v, want Service %s port http", in.Name, r.Host, p.Path, p.Backend, o.services[0].Name)
				}
			}
		}
	}
}

// checkServiceMonitor: it selects the Service and scrapes /metrics on its port metrics.
func checkServiceMonitor(t *testing.T, o *objects) {
	t.Helper()
	for _, sm := range o.serviceMonitors {
		if !subset(sm.Spec.Selector.MatchLabels, o.services[0].Labels) {
			t.Errorf("ServiceMonitor %s selects %s, not the Service (%s)", sm.Name, fmtLabels(sm.Spec.Selector.MatchLabels), fmtLabels(o.services[0].Labels))
		}
		if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "metrics" || sm.Spec.Endpoints[0].Path != "/metrics" {
			t.Errorf("ServiceMonitor %s: endpoints = %+v, want /metrics on port metrics", sm.Name, sm.Spec.Endpoints)
		}
	}
}

// checkPDB: the budget selects the replicas and lets a drain take one (a budget that allows
// no eviction blocks every node drain).
func checkPDB(t *testing.T, o *objects, rc renderCase) {
	t.Helper()
	for _, b := range o.pdbs {
		if !subset(b.Spec.Selector.MatchLabels, o.deployments[0].Spec.Template.Labels) {
			t.Errorf("PodDisruptionBudget %s does not select the replicas", b.Name)
		}
		switch {
		case b.Spec.MaxUnavailable != nil:
			if v := b.Spec.MaxUnavailable.IntValue(); v < 1 && b.Spec.MaxUnavailable.Type == intstr.Int {
				t.Errorf("PodDisruptionBudget %s: maxUnavailable = %d: no drain could proceed", b.Name, v)
			}
		case b.Spec.MinAvailable != nil && b.Spec.MinAvailable.Type == intstr.Int && int32(b.Spec.MinAvailable.IntValue()) >= rc.replicas:
			t.Errorf("PodDisruptionBudget %s: minAvailable %d of %d replicas: no drain could proceed", b.Name, b.Spec.MinAvailable.IntValue(), rc.replicas)
		}
	}
}
