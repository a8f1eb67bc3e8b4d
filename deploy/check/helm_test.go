package check

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// helmModule is the Helm CLI CI runs: the Go module at a fixed version, built by go run (and
// cached by Go after the first build), so nothing but Go modules is downloaded.
const helmModule = "helm.sh/helm/v3/cmd/helm@v3.22.0"

// repoRoot is the repository's root, seen from this module's directory; the Helm commands run
// there, as docs/kubernetes.md shows them.
const repoRoot = "../.."

// chartDir is the chart, relative to the repository's root.
const chartDir = "deploy/helm/transcript-bridge"

// helm runs the Helm CLI in the repository's root; the error carries what it printed on
// standard error.
func helm(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", append([]string{"run", helmModule}, args...)...)
	cmd.Dir = repoRoot
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("helm %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// scheme knows every kind the chart may render: the Kubernetes API's and the Prometheus
// Operator's (ServiceMonitor, PrometheusRule). A kind it does not know fails the decoding.
var scheme = runtime.NewScheme()

func init() {
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme,
		networkingv1.AddToScheme, policyv1.AddToScheme, monitoringv1.AddToScheme} {
		utilruntime.Must(add(scheme))
	}
}

// strict decodes YAML or JSON as the API server's strict field validation does: an unknown or
// misspelt field, a duplicate field or a value of the wrong type is an error.
var strict = serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()

// manifest is one rendered object and the template it came from.
type manifest struct {
	source string // "transcript-bridge/templates/deployment.yaml"
	obj    runtime.Object
}

// decodeManifests splits helm template's output into documents and decodes each strictly into
// its Go type; the error names the template.
func decodeManifests(out []byte) ([]manifest, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(out)))
	var ms []manifest
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return ms, nil
		}
		if err != nil {
			return nil, err
		}
		source, blank := sourceOf(doc)
		if blank {
			continue
		}
		obj, _, err := strict.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		ms = append(ms, manifest{source: source, obj: obj})
	}
}

// sourceOf returns the template a document came from (helm's "# Source:" line) and whether the
// document holds nothing but comments.
func sourceOf(doc []byte) (source string, blank bool) {
	blank = true
	for line := range strings.SplitSeq(string(doc), "\n") {
		t := strings.TrimSpace(line)
		if s, ok := strings.CutPrefix(t, "# Source: "); ok {
			source = s
		}
		if t != "" && !strings.HasPrefix(t, "#") && t != "---" {
			blank = false
		}
	}
	return source, blank
}

// rendered caches helm template's output by its arguments: several tests read one render.
var rendered sync.Map // string → *renderResult

type renderResult struct {
	once sync.Once
	out  []byte
	err  error
}

// render runs helm with args (a template command) once per test binary and decodes its output.
func render(t *testing.T, args []string) []manifest {
	t.Helper()
	v, _ := rendered.LoadOrStore(strings.Join(args, "\x00"), &renderResult{})
	r := v.(*renderResult)
	r.once.Do(func() { r.out, r.err = helm(context.Background(), args...) })
	if r.err != nil {
		t.Fatal(r.err)
	}
	ms, err := decodeManifests(r.out)
	if err != nil {
		t.Fatalf("helm %s: %v", strings.Join(args, " "), err)
	}
	return ms
}

// readRepoFile reads a file of the repository by its path from the root.
func readRepoFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestStrictDecoding proves the decoder refuses what the API server would: a misspelt field, a
// field of another kind, a value of the wrong type, a kind nobody registered.
func TestStrictDecoding(t *testing.T) {
	const good = "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec:\n  ports: [{name: http, port: 80}]\n"
	if _, err := decodeManifests([]byte("# Source: x\n" + good)); err != nil {
		t.Fatalf("decodeManifests(a Service) = %v, want nil", err)
	}
	for _, tc := range []struct{ name, doc string }{
		{"misspelt field", strings.Replace(good, "ports:", "portz:", 1)},
		{"field of another kind", good + "  replicas: 3\n"},
		{"wrong type", strings.Replace(good, "port: 80", "port: eighty", 1)},
		{"duplicate field", good + "  type: ClusterIP\n  type: NodePort\n"},
		{"unknown kind", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: a}\n"},
	} {
		if _, err := decodeManifests([]byte(tc.doc)); err == nil {
			t.Errorf("decodeManifests(%s) = nil, want an error", tc.name)
		}
	}
}
