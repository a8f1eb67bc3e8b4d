package check

import (
	"context"
	"fmt"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

// renderCase is one helm template command CI runs (docs/kubernetes.md shows the same ones) and
// what its objects must be.
type renderCase struct {
	values   string // the -f file, "" for the chart's defaults
	replicas int32
	driver   string
	// ingress, serviceMonitor and prometheusRule say which optional objects the values enable.
	ingress, serviceMonitor, prometheusRule bool
}

// renders are the chart's default values (one replica on SQLite) and three replicas on
// PostgreSQL and NATS with an Ingress, a ServiceMonitor and a PrometheusRule.
var renders = []renderCase{
	{values: "", replicas: 1, driver: "sqlite"},
	{values: chartDir + "/ci/replicas-values.yaml", replicas: 3, driver: "postgres", ingress: true, serviceMonitor: true, prometheusRule: true},
}

// args is the helm template command line of rc, as docs/kubernetes.md writes it after "helm".
func (rc renderCase) args() []string {
	a := []string{"template", "bridge", chartDir, "--namespace", "bridge"}
	if rc.values != "" {
		a = append(a, "-f", rc.values)
	}
	return a
}

func (rc renderCase) name() string {
	if rc.values == "" {
		return "default values"
	}
	return rc.values
}

// objects are a render's objects by kind.
type objects struct {
	deployments     []*appsv1.Deployment
	configMaps      map[string]*corev1.ConfigMap
	services        []*corev1.Service
	jobs            []*batchv1.Job
	ingresses       []*networkingv1.Ingress
	pdbs            []*policyv1.PodDisruptionBudget
	serviceMonitors []*monitoringv1.ServiceMonitor
	rules           []*monitoringv1.PrometheusRule
	pvcs            []*corev1.PersistentVolumeClaim
	secrets         []*corev1.Secret
	other           []manifest
}

func collect(ms []manifest) *objects {
	o := &objects{configMaps: map[string]*corev1.ConfigMap{}}
	for _, m := range ms {
		switch v := m.obj.(type) {
		case *appsv1.Deployment:
			o.deployments = append(o.deployments, v)
		case *corev1.ConfigMap:
			o.configMaps[v.Name] = v
		case *corev1.Service:
			o.services = append(o.services, v)
		case *batchv1.Job:
			o.jobs = append(o.jobs, v)
		case *networkingv1.Ingress:
			o.ingresses = append(o.ingresses, v)
		case *policyv1.PodDisruptionBudget:
			o.pdbs = append(o.pdbs, v)
		case *monitoringv1.ServiceMonitor:
			o.serviceMonitors = append(o.serviceMonitors, v)
		case *monitoringv1.PrometheusRule:
			o.rules = append(o.rules, v)
		case *corev1.PersistentVolumeClaim:
			o.pvcs = append(o.pvcs, v)
		case *corev1.Secret:
			o.secrets = append(o.secrets, v)
		default:
			o.other = append(o.other, m)
		}
	}
	return o
}

// bridgeConfig parses the bridge.yaml of ConfigMap name.
func (o *objects) bridgeConfig(t *testing.T, name string) map[string]any {
	t.Helper()
	cm := o.configMaps[name]
	if cm == nil || cm.Data["bridge.yaml"] == "" {
		t.Fatalf("ConfigMap %q with bridge.yaml: not rendered", name)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(cm.Data["bridge.yaml"]), &cfg); err != nil {
		t.Fatalf("ConfigMap %s: bridge.yaml: %v", name, err)
	}
	return cfg
}

// TestChart renders the chart as CI does, decodes every object strictly, and checks the rules
// of issue 33's point 1 on each render.
func TestChart(t *testing.T) {
	for _, rc := range renders {
		t.Run(rc.name(), func(t *testing.T) {
			o := collect(render(t, rc.args()))
			checkKinds(t, o, rc)
			if t.Failed() {
				return
			}
			checkDeployment(t, o, rc)
			checkConfigMaps(t, o)
			checkMigrationHook(t, o, rc)
			checkService(t, o)
			checkIngress(t, o)
			checkServiceMonitor(t, o)
			checkPDB(t, o, rc)
			checkPrometheusRule(t, o)
		})
	}
}

// checkKinds: one Deployment, one Service, the bridge's ConfigMap, never a Secret (every
// secret comes from a Secret that exists before the chart), and the optional objects exactly
// when the values enable them.
func checkKinds(t *testing.T, o *objects, rc renderCase) {
	t.Helper()
	if len(o.deployments) != 1 || len(o.services) != 1 {
		t.Errorf("Deployments, Services = %d, %d, want 1, 1", len(o.deployments), len(o.services))
	}
	if len(o.secrets) > 0 {
		t.Errorf("the chart renders Secret %q: secrets must come from existing Secrets (values.secrets)", o.secrets[0].Name)
	}
	for _, m := range o.other {
		t.Errorf("%s: %T is not a kind the chart is meant to render", m.source, m.obj)
	}
	for _, c := range []struct {
		what string
		n    int
		want bool
	}{
		{"Ingress", len(o.ingresses), rc.ingress},
		{"ServiceMonitor", len(o.serviceMonitors), rc.serviceMonitor},
		{"PrometheusRule", len(o.rules), rc.prometheusRule},
		{"PodDisruptionBudget", len(o.pdbs), true},
		{"migration Job", len(o.jobs), rc.driver == "postgres"},
	} {
		if got := c.n == 1; got != c.want || c.n > 1 {
			t.Errorf("%s rendered %d time(s), want %v", c.what, c.n, c.want)
		}
	}
}

// TestChartRefuses renders the chart with wrong values: each must fail at install (helm
// template runs the same schema and templates as helm install), saying what is wrong.
func TestChartRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  []string
		want string
	}{
		{"SQLite with 3 replicas", []string{"--set", "replicaCount=3"}, "need store.driver postgres"},
		{"PostgreSQL without its DSN", []string{"--set", "store.driver=postgres"}, "secrets.storeDSN.name: required"},
		{"an unknown store", []string{"--set", "store.driver=mysql"}, "store/driver"},
		{"a misspelt value", []string{"--set", "replicaCont=2"}, "replicaCont"},
		{"a value of the wrong type", []string{"--set", "replicaCount=two"}, "replicaCount"},
		{"a grace too short for the leases", []string{"--set", "terminationGracePeriodSeconds=5"}, "terminationGracePeriodSeconds"},
		{"the API key in values", []string{"--set", "config.api.key=mk_live_x"}, "config.api.key: a secret in values"},
		{"the store in config", []string{"--set", "config.store.dsn=postgres://u:p@db/b"}, "config.store: set by the chart"},
		{"a webhook secret in values", []string{"--set-json", `config.webhooks=[{"name":"crm","url":"https://crm.example.com","secret":"whsec_x"}]`}, "config.webhooks[0].secret"},
		{"an Authorization header in values", []string{"--set-json", `config.webhooks=[{"name":"crm","url":"https://crm.example.com","headers":{"Authorization":"Bearer x"}}]`}, "config.webhooks[0].headers.Authorization"},
		{"NATS credentials in values", []string{"--set", "config.bus.url=nats://user:pw@nats:4222"}, "config.bus.url: carries credentials"},
		{"the listener in config", []string{"--set", "config.server.metrics_addr=0.0.0.0:9100"}, "config.server.metrics_addr: set by the chart"},
		{"a webhook secret for no endpoint", []string{"--set-json", `secrets.webhooks={"crm":{"name":"s","key":"k"}}`}, `no endpoint named "crm"`},
		{"a Secret without a key", []string{"--set", "secrets.apiKey.name=s", "--set", "secrets.apiKey.key="}, "secrets/apiKey/key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"template", "bridge", chartDir, "--namespace", "bridge"}, tc.set...)
			out, err := helm(context.Background(), args...)
			if err == nil {
				t.Fatalf("helm %s = success (%d bytes), want an error mentioning %q", strings.Join(tc.set, " "), len(out), tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("helm %s = %v, want an error mentioning %q", strings.Join(tc.set, " "), err, tc.want)
			}
		})
	}
}

// subset reports whether every label of sel is in labels with the same value.
func subset(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false // an empty selector selects everything: never what the chart means
	}
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// fmtLabels prints labels for a message.
func fmtLabels(l map[string]string) string { return fmt.Sprint(l) }
