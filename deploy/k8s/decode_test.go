package k8s

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// manifests is every object of the directory, decoded into its API type.
// Pointers, so that the mutation tests can break a copy in place.
type manifests struct {
	namespaces   []*corev1.Namespace
	configMaps   map[string]*corev1.ConfigMap
	services     map[string]*corev1.Service
	deployments  []*appsv1.Deployment
	statefulSets []*appsv1.StatefulSet
	pdbs         []*policyv1.PodDisruptionBudget
	// namespaced lists the metadata of every object but the Namespaces.
	namespaced []*metav1.ObjectMeta
}

// apiVersions is the apiVersion each kind must be written with; any other
// kind is an error, so a new one needs a decoder and its checks here.
var apiVersions = map[string]string{
	"Namespace":           "v1",
	"ConfigMap":           "v1",
	"Service":             "v1",
	"Deployment":          "apps/v1",
	"StatefulSet":         "apps/v1",
	"PodDisruptionBudget": "policy/v1",
}

var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*(#.*)?$`)

// loadManifests decodes every *.yaml file of dir, in name order (the order
// kubectl applies them in).
func loadManifests(dir string) (*manifests, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no *.yaml in %s", dir)
	}
	sort.Strings(files)
	m := &manifests{configMaps: map[string]*corev1.ConfigMap{}, services: map[string]*corev1.Service{}}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for i, doc := range docSeparator.Split(string(b), -1) {
			if isBlank(doc) {
				continue
			}
			if err := m.add([]byte(doc)); err != nil {
				return nil, fmt.Errorf("%s document %d: %w", filepath.Base(f), i+1, err)
			}
		}
	}
	return m, nil
}

func isBlank(doc string) bool {
	for _, line := range strings.Split(doc, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}

// add decodes one document strictly: unknown fields, duplicate fields and
// values of the wrong type are errors, as the API server's strict field
// validation would report them.
func (m *manifests) add(doc []byte) error {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return err
	}
	want, ok := apiVersions[tm.Kind]
	if !ok {
		return fmt.Errorf("kind %q: not one of the kinds this test knows", tm.Kind)
	}
	if tm.APIVersion != want {
		return fmt.Errorf("%s: apiVersion %q, want %q", tm.Kind, tm.APIVersion, want)
	}
	switch tm.Kind {
	case "Namespace":
		o := &corev1.Namespace{}
		return m.decode(doc, o, &o.ObjectMeta, func() bool { m.namespaces = append(m.namespaces, o); return true })
	case "ConfigMap":
		o := &corev1.ConfigMap{}
		return m.decode(doc, o, &o.ObjectMeta, func() bool { return putNew(m.configMaps, o.Name, o) })
	case "Service":
		o := &corev1.Service{}
		return m.decode(doc, o, &o.ObjectMeta, func() bool { return putNew(m.services, o.Name, o) })
	case "Deployment":
		o := &appsv1.Deployment{}
		return m.decode(doc, o, &o.ObjectMeta, func() bool { m.deployments = append(m.deployments, o); return true })
	case "StatefulSet":
		o := &appsv1.StatefulSet{}
		return m.decode(doc, o, &o.ObjectMeta, func() bool { m.statefulSets = append(m.statefulSets, o); return true })
	default: // PodDisruptionBudget
		o := &policyv1.PodDisruptionBudget{}
		return m.decode(doc, o, &o.ObjectMeta, func() bool { m.pdbs = append(m.pdbs, o); return true })
	}
}

// decode unmarshals doc strictly into obj (whose metadata is meta) and files
// it with keep, which reports false for a name taken already.
func (m *manifests) decode(doc []byte, obj any, meta *metav1.ObjectMeta, keep func() bool) error {
	if err := decodeStrict(doc, obj); err != nil {
		return err
	}
	if meta.Name == "" {
		return fmt.Errorf("%T without metadata.name", obj)
	}
	if !keep() {
		return fmt.Errorf("%T %q defined twice", obj, meta.Name)
	}
	if _, isNS := obj.(*corev1.Namespace); !isNS {
		m.namespaced = append(m.namespaced, meta)
	}
	return nil
}

func putNew[T any](into map[string]*T, name string, v *T) bool {
	if _, dup := into[name]; dup {
		return false
	}
	into[name] = v
	return true
}

// decodeStrict is the API server's strict field validation (kubectl apply
// --validate=strict, its default): YAML to JSON refusing duplicate keys, then
// a case-sensitive decode that reports unknown fields. sigs.k8s.io/yaml's
// UnmarshalStrict alone would not do: it decodes with encoding/json, which
// matches field names case-insensitively and so lets "readinessprobe" through.
func decodeStrict(doc []byte, obj any) error {
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(js, obj)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}
