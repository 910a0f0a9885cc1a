package fidelity

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// What the REST seam serves of OpenAPI (ctrlsim/openapi.go,
// apiserver/builtinopenapi.go): built-in components from kube-apiserver's
// own generated definitions, CRD documents from the apiextensions builder,
// /openapi/v2 merged and as protobuf. The engine leaves paths out (a named
// simplification, pinned by openapi/paths).

// openAPIComponents is, per group version document, the components whose
// schema (with everything it refers to) both sides must publish alike.
var openAPIComponents = map[string][]string{
	"api/v1":                       {"io.k8s.api.core.v1.ConfigMap", "io.k8s.api.core.v1.Pod", "io.k8s.api.policy.v1.Eviction", "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"},
	"apis/apps/v1":                 {"io.k8s.api.apps.v1.Deployment", "io.k8s.api.apps.v1.DeploymentList", "io.k8s.api.autoscaling.v1.Scale"},
	"apis/coordination.k8s.io/v1":  {"io.k8s.api.coordination.v1.Lease"},
	"apis/policy/v1":               {"io.k8s.api.policy.v1.PodDisruptionBudget"},
	"apis/storage.k8s.io/v1":       {"io.k8s.api.storage.v1.VolumeAttachment"},
	"apis/fidelity.ctrlbugs.io/v1": {"io.ctrlbugs.fidelity.v1.Widget", "io.ctrlbugs.fidelity.v1.Scaler"},
}

func discoveryFor(c client.Client, o *Observation) *discovery.DiscoveryClient {
	cfg := restConfigs[c]
	if cfg == nil {
		o.Add("setup", "no rest.Config for this side")
		return nil
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if !o.Err("client", err) {
		return nil
	}
	return dc
}

// closureHash hashes the component name and everything it refers to
// ($ref, transitively), each component's JSON with sorted keys; it also
// returns how many components that is.
func closureHash(components map[string]json.RawMessage, name string) (string, int) {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(n string) {
		if seen[n] {
			return
		}
		seen[n] = true
		raw, ok := components[n]
		if !ok {
			return
		}
		for _, ref := range refsIn(raw) {
			walk(strings.TrimPrefix(ref, "#/components/schemas/"))
		}
	}
	walk(name)
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		var v any
		if raw, ok := components[n]; ok {
			_ = json.Unmarshal(raw, &v)
		}
		b, _ := json.Marshal(v) // maps marshal with sorted keys
		fmt.Fprintf(h, "%s\x00%s\x00", n, b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], len(names)
}

// refsIn lists every "$ref" value in a JSON document.
func refsIn(raw json.RawMessage) []string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && k == "$ref" {
					out = append(out, s)
				} else {
					walk(e)
				}
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// openAPIV3Doc fetches one group version's document through client-go's
// OpenAPI v3 client: its components and paths.
func openAPIV3Doc(dc *discovery.DiscoveryClient, path string) (components map[string]json.RawMessage, paths int, err error) {
	idx, err := dc.OpenAPIV3().Paths()
	if err != nil {
		return nil, 0, err
	}
	gv, ok := idx[path]
	if !ok {
		return nil, 0, fmt.Errorf("not listed")
	}
	b, err := gv.Schema("application/json")
	if err != nil {
		return nil, 0, err
	}
	var doc struct {
		Paths      map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, 0, err
	}
	return doc.Components.Schemas, len(doc.Paths), nil
}

var _ = register("openapi/v3-components", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	dc := discoveryFor(c, o)
	if dc == nil {
		return
	}
	paths := make([]string, 0, len(openAPIComponents))
	for p := range openAPIComponents {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		comps, _, err := openAPIV3Doc(dc, p)
		if !o.Err(p, err) {
			continue
		}
		for _, name := range openAPIComponents[p] {
			raw, ok := comps[name]
			if !ok {
				o.Add(p+" "+name, "absent")
				continue
			}
			var s struct {
				GVK []map[string]string `json:"x-kubernetes-group-version-kind"`
			}
			_ = json.Unmarshal(raw, &s)
			h, n := closureHash(comps, name)
			o.Add(p+" "+name, fmt.Sprintf("gvk=%v closure=%d sha=%s", s.GVK, n, h))
		}
	}
})

// A schema resolver over discovery (what apiserver's CEL code and kro's
// graph builder use) resolves built-in and custom kinds alike.
var _ = register("openapi/v3-schema-resolver", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	dc := discoveryFor(c, o)
	if dc == nil {
		return
	}
	r := &resolver.ClientDiscoveryResolver{Discovery: dc}
	for _, tc := range []struct {
		gvk  schema.GroupVersionKind
		path []string
	}{
		{schema.GroupVersionKind{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}, []string{"spec", "leaseDurationSeconds"}},
		{schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}, []string{"spec", "maxUnavailable"}},
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, []string{"spec", "template", "spec", "containers"}},
		{widgetGVK, []string{"spec"}},
		{schema.GroupVersionKind{Group: "fidelity.ctrlbugs.io", Version: "v9", Kind: "Widget"}, nil},
	} {
		s, err := r.ResolveSchema(tc.gvk)
		if !o.Err(tc.gvk.String(), err) {
			continue
		}
		desc := "found"
		for _, p := range tc.path {
			next, ok := s.Properties[p]
			if !ok {
				desc = "no " + p
				break
			}
			s = &next
			if s.Items != nil && s.Items.Schema != nil && p == tc.path[len(tc.path)-1] {
				desc = "items"
			}
		}
		if desc == "found" || desc == "items" {
			desc += fmt.Sprintf(" type=%v format=%q int-or-string=%v", s.Type, s.Format, s.Extensions["x-kubernetes-int-or-string"])
		}
		o.Add(tc.gvk.String(), desc)
	}
})

var _ = register("openapi/v2", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	dc := discoveryFor(c, o)
	if dc == nil {
		return
	}
	// client-go asks for the deprecated protobuf type; what comes back:
	res := dc.RESTClient().Get().AbsPath("/openapi/v2").SetHeader("Accept", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf").Do(ctx)
	var ct string
	res.ContentType(&ct)
	o.Add("protobuf.contentType", ct)
	doc, err := dc.OpenAPISchema()
	if !o.Err("OpenAPISchema", err) {
		return
	}
	o.Add("swagger", doc.GetSwagger())
	defs := map[string][]byte{}
	for _, p := range doc.GetDefinitions().GetAdditionalProperties() {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(p.GetValue())
		if err != nil {
			o.Add("marshal "+p.GetName(), err.Error())
			continue
		}
		defs[p.GetName()] = b
	}
	for _, name := range []string{
		"io.k8s.api.coordination.v1.Lease", "io.k8s.api.apps.v1.Deployment", "io.k8s.api.policy.v1.PodDisruptionBudget",
		"io.k8s.api.core.v1.PodSpec", "io.ctrlbugs.fidelity.v1.Widget", "io.ctrlbugs.fidelity.v1.Scaler",
	} {
		b, ok := defs[name]
		if !ok {
			o.Add(name, "absent")
			continue
		}
		sum := sha256.Sum256(b)
		o.Add(name, hex.EncodeToString(sum[:8]))
	}
	raw, err := dc.RESTClient().Get().AbsPath("/openapi/v2").SetHeader("Accept", "application/json").DoRaw(ctx)
	if o.Err("json", err) {
		o.Add("json.valid", fmt.Sprint(json.Valid(raw)))
	}
	_, err = dc.RESTClient().Get().AbsPath("/openapi/v2").SetHeader("Accept", "text/html").DoRaw(ctx)
	o.Err("text/html", err)
})

// The engine's documents have no paths (it has no REST routes to build
// them from): pinned as a known difference.
var _ = register("openapi/paths", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	dc := discoveryFor(c, o)
	if dc == nil {
		return
	}
	for _, p := range []string{"apis/apps/v1", "apis/fidelity.ctrlbugs.io/v1"} {
		_, n, err := openAPIV3Doc(dc, p)
		if o.Err(p, err) {
			o.Add(p+" paths", fmt.Sprint(n > 0))
		}
	}
	doc, err := dc.OpenAPISchema()
	if o.Err("v2", err) {
		o.Add("v2 paths", fmt.Sprint(len(doc.GetPaths().GetPath()) > 0))
	}
})
