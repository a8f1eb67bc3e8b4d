package check

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// secretLooking matches text that is a secret whatever key holds it: a transcription API key,
// a webhook signing secret, a URL with a password.
var secretLooking = regexp.MustCompile(`mk_(live|test)_[A-Za-z0-9_]+|whsec_[A-Za-z0-9+/=]+|://[^/@\s:]+:[^/@\s]+@`)

// dig returns the value at keys in a parsed YAML tree (nil when absent).
func dig(tree any, keys ...string) any {
	for _, k := range keys {
		m, ok := tree.(map[string]any)
		if !ok {
			return nil
		}
		tree = m[k]
	}
	return tree
}

// checkConfigMaps: no ConfigMap holds a secret: no inline secret setting in bridge.yaml (api.key,
// webhooks[].secret, a store DSN or a bus URL that carries credentials, an Authorization
// header), and nothing in any ConfigMap that looks like one.
func checkConfigMaps(t *testing.T, o *objects) {
	t.Helper()
	for name, cm := range o.configMaps {
		for key, text := range cm.Data {
			if m := secretLooking.FindString(text); m != "" {
				t.Errorf("ConfigMap %s: %s holds %q, a secret", name, key, m)
			}
		}
		if cm.Data["bridge.yaml"] == "" {
			continue
		}
		for _, e := range inlineSecrets(o.bridgeConfig(t, name), "") {
			t.Errorf("ConfigMap %s: bridge.yaml: %s", name, e)
		}
	}
}

// inlineSecrets walks a bridge.yaml tree for settings that hold a secret themselves instead of
// naming its file.
func inlineSecrets(tree any, at string) []string {
	var out []string
	switch v := tree.(type) {
	case map[string]any:
		for k, child := range v {
			p := strings.TrimPrefix(at+"."+k, ".")
			switch s, _ := child.(string); {
			case inlineSecretKeys.MatchString(p):
				out = append(out, fmt.Sprintf("%s is set: a secret inline (use its *_file setting)", p))
			case strings.EqualFold(k, "authorization") && strings.HasSuffix(at, ".headers"):
				out = append(out, fmt.Sprintf("%s is set: a credential inline", p))
			case (k == "dsn" || k == "url") && hasUserinfo(s):
				out = append(out, fmt.Sprintf("%s = %q carries credentials", p, s))
			}
			out = append(out, inlineSecrets(child, p)...)
		}
	case []any:
		for i, child := range v {
			out = append(out, inlineSecrets(child, fmt.Sprintf("%s[%d]", at, i))...)
		}
	}
	return out
}

// inlineSecretKeys are the bridge's settings that hold a secret themselves
// (docs/configuration.md): each has a *_file twin.
var inlineSecretKeys = regexp.MustCompile(`^api\.key$|^webhooks\[\d+\]\.secret$`)

// hasUserinfo reports whether s is a URL with a user (and maybe a password) in it.
func hasUserinfo(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.User != nil
}

// fileSettings returns every *_file setting of a bridge.yaml tree with its value.
func fileSettings(tree any, at string) map[string]string {
	out := map[string]string{}
	switch v := tree.(type) {
	case map[string]any:
		for k, child := range v {
			p := strings.TrimPrefix(at+"."+k, ".")
			if s, ok := child.(string); ok && strings.HasSuffix(k, "_file") && s != "" {
				out[p] = s
			}
			for k2, v2 := range fileSettings(child, p) {
				out[k2] = v2
			}
		}
	case []any:
		for i, child := range v {
			for k2, v2 := range fileSettings(child, fmt.Sprintf("%s[%d]", at, i)) {
				out[k2] = v2
			}
		}
	}
	return out
}

// secretFileSettings are the *_file settings that name a secret (not a mapping CSV).
var secretFileSettings = regexp.MustCompile(`(^|\.)(key_file|dsn_file|url_file|admin_token_file|secret_file|client_secret_file|webhook_secret_file|secret_access_key_file|credentials_file)$|notifications\.client_state_file$`)

// checkSecretFiles: every secret file bridge.yaml names (the *_file settings) is on a read-only
// volume of Secrets mounted in c, and, on the chart's projected volume, is one of its items.
func checkSecretFiles(t *testing.T, what string, spec *corev1.PodSpec, c *corev1.Container, cfg map[string]any) {
	t.Helper()
	for key, file := range fileSettings(cfg, "") {
		if !secretFileSettings.MatchString(key) {
			continue
		}
		m, rel := mountOf(c, file)
		if m == nil {
			t.Errorf("%s: %s = %s is on no volume of container %s", what, key, file, c.Name)
			continue
		}
		v := volume(t, spec, m.Name)
		switch {
		case v.Secret != nil:
		case v.Projected != nil:
			if !slices.Contains(projectedItems(v.Projected), rel) {
				t.Errorf("%s: %s = %s: volume %s projects %q, not %s", what, key, file, m.Name, projectedItems(v.Projected), rel)
			}
		default:
			t.Errorf("%s: %s = %s is on volume %s (%+v), not a Secret", what, key, file, m.Name, v.VolumeSource)
		}
	}
}

// projectedItems are the file paths a projected volume of Secrets holds; a source that is not
// a Secret's, or projects a whole Secret, yields nothing (the check then fails).
func projectedItems(p *corev1.ProjectedVolumeSource) []string {
	var out []string
	for _, s := range p.Sources {
		if s.Secret == nil {
			continue
		}
		for _, it := range s.Secret.Items {
			out = append(out, it.Path)
		}
	}
	return out
}

// secretRefs are the Secrets (name → keys) a pod spec reads: its projected items and its
// Secret volumes (whose keys are not named: nil).
func secretRefs(spec *corev1.PodSpec) map[string][]string {
	out := map[string][]string{}
	for _, v := range spec.Volumes {
		switch {
		case v.Secret != nil:
			if _, ok := out[v.Secret.SecretName]; !ok {
				out[v.Secret.SecretName] = nil
			}
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				if s.Secret == nil {
					continue
				}
				for _, it := range s.Secret.Items {
					out[s.Secret.Name] = append(out[s.Secret.Name], it.Key)
				}
			}
		}
	}
	return out
}
