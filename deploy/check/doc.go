// Package check holds CI's checks of what operators deploy, without a cluster: the Helm chart
// (deploy/helm/transcript-bridge) rendered by the Helm CLI and decoded strictly into the
// Kubernetes API's types, the alert rules (deploy/prometheus/alerts.yaml) parsed by
// Prometheus's own rule parser, the Grafana dashboard (deploy/grafana/bridge.json), and the
// commands docs/kubernetes.md shows. The metrics the alerts and the dashboard read are checked
// against the /metrics of a bridge running on loopback.
//
// It is a module of its own so that the Kubernetes, Prometheus Operator and Prometheus modules
// stay out of the bridge's go.mod; .ci/run runs its tests. It has no code outside its tests.
package check
