package oracle

import (
	"encoding/json"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// widgetCRD serves example.org Widget at v1 (storage) and v2: spec.size,
// spec.selector (a map), spec.items (a list of objects), spec.config
// (x-kubernetes-preserve-unknown-fields), spec.port (int-or-string),
// status.conditions and status.observedGeneration; v2 has spec.replicas
// instead of spec.size.
const widgetCRD = `{
  "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
  "metadata": {"name": "widgets.example.org"},
  "spec": {"group": "example.org", "scope": "Namespaced",
    "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
    "versions": [
      {"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
          "size": {"type": "integer"},
          "ratio": {"type": "number"},
          "selector": {"type": "object", "additionalProperties": {"type": "string"}},
          "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
          "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
          "port": {"x-kubernetes-int-or-string": true},
          "since": {"type": "string", "format": "date-time"}}},
        "status": {"type": "object", "properties": {
          "observedGeneration": {"type": "integer"},
          "conditions": {"type": "array", "items": {"type": "object", "properties": {
            "type": {"type": "string"}, "status": {"type": "string"}, "lastTransitionTime": {"type": "string", "format": "date-time"}}}}}}}}}},
      {"name": "v2", "served": true, "storage": false, "schema": {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}}]}}`

func widgetSchemas(t *testing.T) *Schemas {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := json.Unmarshal([]byte(widgetCRD), crd); err != nil {
		t.Fatal(err)
	}
	return NewSchemas(crd)
}

const widget = `object('example.org/v1', 'Widget', 'default', 'w')`

// TestSchemasCheck: a call of object or objectsOf with a literal kind is
// typed by the kind's schema (a built-in's from kube's OpenAPI, a custom
// resource's from its CRD), so a field the kind does not have is a check
// error naming the field, the kind and the field's path, with cel-go's
// caret; what the JSON may hold that the schema does not say is dyn.
func TestSchemasCheck(t *testing.T) {
	s := widgetSchemas(t)
	for _, tc := range []struct {
		name, expr string
		want       string // "": checks; else substrings of the error, "|"-separated
	}{
		{"built-in nested field", `object('apps/v1', 'Deployment', 'default', 'd').status.observedGeneration == object('apps/v1', 'Deployment', 'default', 'd').metadata.generation`, ""},
		{"built-in typo", `object('apps/v1', 'Deployment', 'default', 'd').status.obsrvedGeneration == 1`,
			"ERROR: <input>:1:55: undefined field 'obsrvedGeneration': apps/v1 Deployment has no field status.obsrvedGeneration (did you mean status.observedGeneration?)\n" +
				" | object('apps/v1', 'Deployment', 'default', 'd').status.obsrvedGeneration == 1\n" +
				" | ......................................................^"},
		{"built-in typo under has", `has(object('v1', 'Pod', 'default', 'p').spec.nodeNmae)`, "v1 Pod has no field spec.nodeNmae (did you mean spec.nodeName?)"},
		{"built-in typo in a list item", `objectsOf('v1', 'Pod').exists(p, p.spec.containers.exists(c, c.imgae == 'x'))`, "v1 Pod has no field spec.containers[*].imgae"},
		{"optional selection is checked too", `objectsOf('v1', 'Pod').exists(p, p.?status.?phsae.orValue('') == 'Running')`, "v1 Pod has no field status.phsae"},
		{"optional selection", `objectsOf('v1', 'Pod').exists(p, p.?status.?phase.orValue('') == 'Running')`, ""},
		{"object metadata", `objectsOf('v1', 'Pod').all(p, p.metadata.namespace == 'default' && p.metadata.labels['app'] == 'web' && 'x' in p.metadata.finalizers && !has(p.metadata.deletionTimestamp) && p.metadata.ownerReferences.all(r, r.kind == 'ReplicaSet'))`, ""},
		{"a timestamp is the JSON's string", `timestamp(object('v1', 'Pod', 'default', 'p').metadata.creationTimestamp) < timestamp('2000-01-01T00:00:00Z')`, ""},
		{"a quantity is dyn", `quantity(object('v1', 'Pod', 'default', 'p').spec.containers[0].resources.requests['cpu']).isLessThan(quantity('1'))`, ""},
		{"a ConfigMap's data is a map", `object('v1', 'ConfigMap', 'default', 'c').data.anything == 'x'`, ""},
		{"null comparison", `object('apps/v1', 'Deployment', 'default', 'd') == null`, ""},
		{"a wrong type", `object('apps/v1', 'Deployment', 'default', 'd').spec.replicas == 'three'`, "found no matching overload for '_==_'"},
		{"CRD nested field", widget + `.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True') && ` + widget + `.spec.size >= 1`, ""},
		{"CRD typo", widget + `.status.obsrvedGeneration == 1`, "example.org/v1 Widget has no field status.obsrvedGeneration (did you mean status.observedGeneration?)"},
		{"CRD typo at the root", `has(` + widget + `.stauts)`, "example.org/v1 Widget has no field stauts (did you mean status?)"},
		{"CRD version", `object('example.org/v2', 'Widget', 'default', 'w').spec.size == 1`, "example.org/v2 Widget has no field spec.size"},
		{"CRD metadata is ObjectMeta", widget + `.metadata.generation == 2 && has(` + widget + `.metadata.labels) && ` + widget + `.metadata.finalizers.size() == 0`, ""},
		{"CRD metadata typo", widget + `.metadata.generaton == 2`, "example.org/v1 Widget has no field metadata.generaton (did you mean metadata.generation?)"},
		{"preserve-unknown-fields stays dyn", widget + `.spec.config.anything.nested == 'x'`, ""},
		{"int-or-string is dyn", widget + `.spec.port == 8080 || ` + widget + `.spec.port == 'http'`, ""},
		{"a number is dyn", widget + `.spec.ratio == 1`, ""},
		{"a date-time is a string", `timestamp(` + widget + `.spec.since) > timestamp('2000-01-01T00:00:00Z')`, ""},
		{"additionalProperties is a map", widget + `.spec.selector['app'] == 'web' && 'app' in ` + widget + `.spec.selector`, ""},
		{"list items", widget + `.spec.items.all(i, i.name != '') && ` + widget + `.spec.items.all(i, i.nmae != '')`, "example.org/v1 Widget has no field spec.items[*].nmae"},
		{"a kind with no schema is dyn", `object('other.org/v1', 'Gadget', 'default', 'g').whatever.goes`, ""},
		{"a computed kind is dyn", `cel.bind(k, 'Deploy' + 'ment', object('apps/v1', k, 'default', 'd').status.anything == 1)`, ""},
		{"two kinds in one list need dyn", `(dyn(objectsOf('v1', 'Pod')) + objectsOf('v1', 'Node')).size() > 0`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := CheckCEL(tc.expr); err != nil {
				t.Fatalf("CheckCEL: %v", err)
			}
			err := s.Check(tc.expr)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Check: %v", err)
			case tc.want != "" && err == nil:
				t.Errorf("Check: nil, want an error with %q", tc.want)
			case tc.want != "":
				for w := range strings.SplitSeq(tc.want, "|") {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("Check:\n%v\nwant it to contain\n%s", err, w)
					}
				}
			}
		})
	}
}

// TestSchemasCheckWrite: a write oracle whose select names a kind sees old
// and new typed as its objects at the version the engine stores (a CRD's
// storage version); with no kind they are dyn.
func TestSchemasCheckWrite(t *testing.T) {
	s := widgetSchemas(t)
	deploy := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	for _, tc := range []struct {
		name string
		gvk  schema.GroupVersionKind
		expr string
		want string
	}{
		{"typed", deploy, `old == null || new == null || !has(old.status.observedGeneration) || new.status.observedGeneration >= old.status.observedGeneration`, ""},
		{"typo", deploy, `old == null || new.status.obsrvedGeneration >= 0`, "apps/v1 Deployment has no field status.obsrvedGeneration"},
		{"no kind", schema.GroupVersionKind{}, `old == null || new.status.obsrvedGeneration >= 0`, ""},
		{"storage version", schema.GroupVersionKind{Group: "example.org", Version: "v2", Kind: "Widget"}, `new == null || new.spec.size >= 0`, ""},
		{"storage version typo", schema.GroupVersionKind{Group: "example.org", Version: "v2", Kind: "Widget"}, `new == null || new.spec.replicas >= 0`, "example.org/v1 Widget has no field spec.replicas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := CheckWriteCEL(tc.expr); err != nil {
				t.Fatalf("CheckWriteCEL: %v", err)
			}
			err := s.CheckWrite(tc.gvk, tc.expr)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("CheckWrite: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("CheckWrite: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestOptionalSelection: the documented idiom for a nested optional field,
// optional selection with a default, runs on the engine's objects (maps):
// an absent level gives the default, a present one its value.
func TestOptionalSelection(t *testing.T) {
	p, err := CompileCEL(`objectsOf('source.toolkit.fluxcd.io/v1', 'Bucket').map(b, b.?status.?observedGeneration.orValue(-1)) == [-1, 2]`)
	if err != nil {
		t.Fatal(err)
	}
	a := bucket(3, -1)
	b := bucket(3, 2)
	b.SetName("z")
	ok, err := p.Eval(State{Objects: []*unstructured.Unstructured{a, b}})
	if err != nil || !ok {
		t.Errorf("Eval = %v, %v; want true", ok, err)
	}
}
