package check

import (
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// compose is what this test reads of compose.yaml (its anchors and merge keys resolved).
type compose struct {
	Services map[string]struct {
		Command     []string          `json:"command"`
		Environment map[string]string `json:"environment"`
		Volumes     []string          `json:"volumes"`
	} `json:"services"`
}

// dockerfileValue returns the argument of the Dockerfile's last instr instruction.
func dockerfileValue(t *testing.T, instr string) string {
	t.Helper()
	var last string
	for _, m := range regexp.MustCompile(`(?m)^`+instr+` (.+)$`).FindAllStringSubmatch(string(readRepoFile(t, "Dockerfile")), -1) {
		last = m[1]
	}
	if last == "" {
		t.Fatalf("Dockerfile: no %s", instr)
	}
	return last
}

// TestComposeAndChartAgree: the chart describes compose.yaml's topology. The migration Job runs
// compose's migrate command; the replicas run the image's command in its working directory, on
// compose's store driver, and with the profile replicas' bus; the data and inbox volumes are
// mounted where compose mounts them; and the chart's default configuration is the image's.
func TestComposeAndChartAgree(t *testing.T) {
	var c compose
	if err := yaml.Unmarshal(readRepoFile(t, "compose.yaml"), &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	var cmd []string
	if err := json.Unmarshal([]byte(dockerfileValue(t, "CMD")), &cmd); err != nil {
		t.Fatalf("Dockerfile CMD: %v", err)
	}
	workdir := dockerfileValue(t, "WORKDIR")

	replicas := collect(render(t, renders[1].args()))
	d := replicas.deployments[0]
	run := container(t, &d.Spec.Template.Spec, "bridge")
	migrate := container(t, &replicas.jobs[0].Spec.Template.Spec, "migrate")
	if !slices.Equal(migrate.Args, c.Services["migrate"].Command) {
		t.Errorf("the Job runs %q, compose's migrate %q", migrate.Args, c.Services["migrate"].Command)
	}
	if !slices.Equal(run.Args, cmd) {
		t.Errorf("the replicas run %q, the image %q (compose's bridge and replicas)", run.Args, cmd)
	}
	if run.WorkingDir != workdir || migrate.WorkingDir != workdir {
		t.Errorf("working directories %q, %q, the image's %q", run.WorkingDir, migrate.WorkingDir, workdir)
	}
	cfg := replicas.bridgeConfig(t, configMapOf(t, &d.Spec.Template.Spec, run, configPath))
	var composeCfg map[string]any
	if err := yaml.Unmarshal(readRepoFile(t, "configs/docker/postgres.yaml"), &composeCfg); err != nil {
		t.Fatal(err)
	}
	if got, want := dig(cfg, "store", "driver"), dig(composeCfg, "store", "driver"); got != want {
		t.Errorf("store.driver = %v, compose's %v", got, want)
	}
	if got, want := dig(cfg, "bus", "driver"), strings.ToLower(c.Services["replica-1"].Environment["BRIDGE_BUS__DRIVER"]); got != want {
		t.Errorf("bus.driver = %v, compose's replicas %v", got, want)
	}
	for _, key := range []string{"dsn_file", "key_file"} { // compose's secrets bridge_dsn, transcripts_key
		section := map[string]string{"dsn_file": "store", "key_file": "api"}[key]
		if dig(composeCfg, section, key) == nil || dig(cfg, section, key) == nil {
			t.Errorf("%s.%s: compose %v, the chart %v: both read the secret from a file", section, key, dig(composeCfg, section, key), dig(cfg, section, key))
		}
	}

	defaults := collect(render(t, renders[0].args()))
	dd := defaults.deployments[0]
	drun := container(t, &dd.Spec.Template.Spec, "bridge")
	var targets []string
	for _, v := range c.Services["bridge"].Volumes {
		parts := strings.Split(v, ":")
		targets = append(targets, parts[1])
	}
	for _, dir := range []string{workdir, workdir + "/inbox"} {
		if !slices.Contains(targets, dir) {
			t.Errorf("compose's bridge mounts %q, not %s", targets, dir)
		}
		volumeAt(t, &dd.Spec.Template.Spec, drun, dir)
	}
	var image map[string]any
	if err := yaml.Unmarshal(readRepoFile(t, "configs/docker/bridge.yaml"), &image); err != nil {
		t.Fatal(err)
	}
	chartDefault := defaults.bridgeConfig(t, configMapOf(t, &dd.Spec.Template.Spec, drun, configPath))
	if !reflect.DeepEqual(chartDefault["sources"], image["sources"]) {
		t.Errorf("the chart's default sources = %v, the image's (configs/docker/bridge.yaml) %v", chartDefault["sources"], image["sources"])
	}
	if chartDefault["api"] == nil || dig(chartDefault, "api", "base_url") != dig(image, "api", "base_url") {
		t.Errorf("the chart's default api.base_url = %v, the image's %v", dig(chartDefault, "api", "base_url"), dig(image, "api", "base_url"))
	}
}
