// Package k8s holds the Kubernetes manifests of a rocketraft cluster and the
// test that keeps them honest. It has no code to import: the YAML files are
// the product, applied in file-name order with `kubectl apply -f deploy/k8s/`:
//
//	00-namespace.yaml   the rocketraft namespace
//	10-namesrv.yaml     nameserver ConfigMap, Deployment (one pod), Service
//	20-broker-a.yaml    group broker-a: one config per pod, headless Service,
//	                    StatefulSet of three, PodDisruptionBudget
//
// This directory is a Go module of its own (go.mod, replace ../..) so that the
// broker's module does not carry k8s.io/api. The root's `go test ./...` skips
// nested modules; `make test` and `make lint` run this one too.
//
// The test decodes every document strictly into the Kubernetes API types
// (sigs.k8s.io/yaml UnmarshalStrict: an unknown or misspelt field fails),
// loads every embedded broker.conf and namesrv.conf with the config package's
// own parser, and checks that they agree: container ports against listenPort,
// adminListen and the raft port; probes against adminListen's port and the
// /readyz, /healthz paths; dLegerPeers against <sts>-<ordinal>.<headless
// service>.<namespace>.svc.cluster.local for the StatefulSet's replicas; the
// PodDisruptionBudget against the raft quorum; the pods' uid against the
// Dockerfile's. The checks return problems instead of failing at the first, so
// a second test feeds them broken copies and expects each mistake caught.
//
// Concurrency: none. Imports (tests only): config, k8s.io/api,
// k8s.io/apimachinery, sigs.k8s.io/yaml; nothing imports this package.
package k8s
