package check

import (
	"bufio"
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// docsPath is the Kubernetes page.
const docsPath = "docs/kubernetes.md"

// docCommands are the command lines of the page's ```sh blocks (a trailing backslash joins the
// next line), split into words.
func docCommands(t *testing.T) [][]string {
	t.Helper()
	var out [][]string
	sc := bufio.NewScanner(strings.NewReader(string(readRepoFile(t, docsPath))))
	inSh := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```"):
			inSh = !inSh && strings.TrimPrefix(line, "```") == "sh"
			continue
		case !inSh || strings.TrimSpace(line) == "":
			continue
		}
		for strings.HasSuffix(line, "\\") && sc.Scan() {
			line = strings.TrimSuffix(line, "\\") + " " + sc.Text()
		}
		out = append(out, strings.Fields(line))
	}
	return out
}

// flagValue returns the value of flag in words ("--namespace bridge" or "--namespace=bridge").
func flagValue(words []string, names ...string) []string {
	var out []string
	for i, w := range words {
		for _, n := range names {
			if w == n && i+1 < len(words) {
				out = append(out, words[i+1])
			} else if v, ok := strings.CutPrefix(w, n+"="); ok {
				out = append(out, v)
			}
		}
	}
	return out
}

// TestDocsCommands: the page's helm commands are CI's: each lint runs here and passes, each
// template is one TestChart renders and checks (and each of those is shown), each install or
// upgrade installs a chart and values CI renders. Its kubectl commands create the Secrets the
// rendered objects read, name the rendered Deployment and Job, and run bridge commands that
// exist.
func TestDocsCommands(t *testing.T) {
	if !strings.Contains(string(readRepoFile(t, docsPath)), "go run "+helmModule) {
		t.Errorf("%s does not say which Helm CI runs (go run %s)", docsPath, helmModule)
	}
	if !strings.Contains(string(readRepoFile(t, ".ci/run")), "deploy/check") {
		t.Errorf(".ci/run does not run deploy/check")
	}
	shown := map[string]bool{}
	var lints int
	created := map[string][]string{} // Secret → keys
	var kubectl [][]string
	for _, words := range docCommands(t) {
		switch {
		case len(words) < 2:
		case words[0] == "helm" && words[1] == "lint":
			lints++
			if _, err := helm(context.Background(), words[1:]...); err != nil {
				t.Errorf("%s: %v", docsPath, err)
			}
		case words[0] == "helm" && words[1] == "template":
			shown[strings.Join(words[1:], " ")] = true
		case words[0] == "helm" && (words[1] == "upgrade" || words[1] == "install"):
			checkInstall(t, words)
		case words[0] == "helm":
			t.Errorf("%s: %q: CI runs no helm %s", docsPath, strings.Join(words, " "), words[1])
		case words[0] == "kubectl" && slices.Contains(words, "secret") && slices.Contains(words, "generic"):
			name := words[slices.Index(words, "generic")+1]
			for _, f := range flagValue(words, "--from-file") {
				key, _, _ := strings.Cut(f, "=")
				created[name] = append(created[name], key)
			}
		case words[0] == "kubectl":
			kubectl = append(kubectl, words)
		}
	}
	if lints < len(renders) {
		t.Errorf("%s shows %d helm lint commands, want one for each of CI's %d values", docsPath, lints, len(renders))
	}
	for _, rc := range renders {
		if !shown[strings.Join(rc.args(), " ")] {
			t.Errorf("%s does not show CI's render: helm %s", docsPath, strings.Join(rc.args(), " "))
		}
		delete(shown, strings.Join(rc.args(), " "))
	}
	for cmd := range shown {
		t.Errorf("%s: helm %s is not a render CI checks", docsPath, cmd)
	}
	o := collect(render(t, renders[1].args()))
	checkDocSecrets(t, o, created)
	checkDocKubectl(t, o, kubectl)
}

// checkInstall: helm upgrade [--install] RELEASE CHART installs what CI renders: the release
// bridge, in the namespace bridge, with the values of one of CI's renders (--set aside).
func checkInstall(t *testing.T, words []string) {
	t.Helper()
	var pos []string
	for i := 2; i < len(words); i++ {
		switch w := words[i]; {
		case w == "-f" || w == "--values" || w == "--namespace" || w == "-n" || w == "--set":
			i++
		case !strings.HasPrefix(w, "-"):
			pos = append(pos, w)
		}
	}
	files := flagValue(words, "-f", "--values")
	ns := flagValue(words, "--namespace", "-n")
	ok := len(pos) == 2 && pos[0] == "bridge" && pos[1] == chartDir && slices.Equal(ns, []string{"bridge"}) &&
		slices.ContainsFunc(renders, func(rc renderCase) bool {
			return (rc.values == "" && len(files) == 0) || (len(files) == 1 && files[0] == rc.values)
		})
	if !ok {
		t.Errorf("%s: %q does not install a release CI renders (bridge, %s, --namespace bridge, CI's values)", docsPath, strings.Join(words, " "), chartDir)
	}
}

// checkDocSecrets: the page creates every Secret, and every key of it, that the rendered
// replicas and Job read.
func checkDocSecrets(t *testing.T, o *objects, created map[string][]string) {
	t.Helper()
	d := o.deployments[0]
	c := container(t, &d.Spec.Template.Spec, "bridge")
	cfg := o.bridgeConfig(t, configMapOf(t, &d.Spec.Template.Spec, c, configPath))
	want := secretRefs(&d.Spec.Template.Spec)
	for name, keys := range secretRefs(&o.jobs[0].Spec.Template.Spec) {
		want[name] = append(want[name], keys...)
	}
	for _, file := range fileSettings(cfg, "") { // the keys of whole Secrets: the files read
		if m, rel := mountOf(c, file); m != nil {
			if v := volume(t, &d.Spec.Template.Spec, m.Name); v.Secret != nil {
				want[v.Secret.SecretName] = append(want[v.Secret.SecretName], rel)
			}
		}
	}
	for name, keys := range want {
		slices.Sort(keys)
		keys = slices.Compact(keys)
		if _, ok := created[name]; !ok {
			t.Errorf("%s does not create Secret %s, which the chart reads", docsPath, name)
		}
		for _, k := range keys {
			if !slices.Contains(created[name], k) {
				t.Errorf("%s creates Secret %s with keys %q, without %s", docsPath, name, created[name], k)
			}
		}
	}
}

// checkDocKubectl: deploy/… and job/… name the rendered Deployment and Job, and every bridge
// command run in a replica exists with its flags (bridge … --help passes).
func checkDocKubectl(t *testing.T, o *objects, cmds [][]string) {
	t.Helper()
	for _, words := range cmds {
		for _, w := range words {
			if n, ok := strings.CutPrefix(w, "deploy/"); ok && n != o.deployments[0].Name {
				t.Errorf("%s: %q names Deployment %s; the chart's is %s", docsPath, strings.Join(words, " "), n, o.deployments[0].Name)
			}
			if n, ok := strings.CutPrefix(w, "job/"); ok && n != o.jobs[0].Name {
				t.Errorf("%s: %q names Job %s; the chart's is %s", docsPath, strings.Join(words, " "), n, o.jobs[0].Name)
			}
		}
		if i := slices.Index(words, "--"); i >= 0 && i+1 < len(words) && words[i+1] == "bridge" {
			args := append(slices.Clone(words[i+2:]), "--help")
			if out, err := exec.Command(bridgeBinary(t), args...).CombinedOutput(); err != nil {
				t.Errorf("%s: bridge %s: %v: %s", docsPath, strings.Join(args, " "), err, out)
			}
		}
	}
}
