package fidelity

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Field validation (the fieldValidation query parameter, KEP-2885): what a
// write carrying fields the schema does not know, or a JSON key twice,
// gets back: Strict refuses it (400, "strict decoding error: …"), Warn (the
// server's default when the client names none) stores the object without
// them and answers with a Warning header per field, Ignore drops them
// silently. Each case writes through client-go's dynamic client (the
// engine's REST seam) and a raw REST client (for bodies a typed or
// unstructured encoder cannot produce), and records the error, the
// warnings and what was stored.

// warnings collects the Warning headers client-go hands to a rest.Config's
// WarningHandler.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, fmt.Sprintf("%d %s", code, text))
}

// take returns the warnings since the last take, sorted, joined.
func (w *warnings) take() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := append([]string(nil), w.msgs...)
	w.msgs = nil
	sort.Strings(out)
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, " | ")
}

// warnedConfig is this side's rest.Config whose warnings go to w.
func warnedConfig(c client.Client, o *Observation) (*rest.Config, *warnings) {
	cfg := restConfigs[c]
	if cfg == nil {
		o.Add("setup", "no rest.Config for this side")
		return nil, nil
	}
	cfg = rest.CopyConfig(cfg)
	w := &warnings{}
	cfg.WarningHandler = w
	return cfg, w
}

func warnedDynamic(c client.Client, o *Observation) (dynamic.Interface, *warnings) {
	cfg, w := warnedConfig(c, o)
	if cfg == nil {
		return nil, nil
	}
	d, err := dynamic.NewForConfig(cfg)
	if !o.Err("dynamic", err) {
		return nil, nil
	}
	return d, w
}

var widgetGVR = schema.GroupVersionResource{Group: "fidelity.ctrlbugs.io", Version: "v1", Resource: "widgets"}

// fvTarget is one kind a field-validation case writes: a built-in
// (ConfigMap) or a custom resource (Widget), with the unknown fields put at
// the top level, in metadata and (Widget) in spec.
type fvTarget struct {
	name string
	gvr  schema.GroupVersionResource
	// obj returns an object of the kind with unknown fields.
	obj func(ns, name string) *unstructured.Unstructured
	// patch is a merge patch carrying unknown fields and one known change.
	patch string
	// applyTwice is an apply configuration (YAML, %[1]s the name) with a
	// key twice.
	applyTwice string
}

var fvTargets = []fvTarget{
	{name: "cm", gvr: cmGVR,
		obj: func(ns, name string) *unstructured.Unstructured {
			u := cmObj(ns, name)
			u.Object["bogus"] = int64(1)
			_ = unstructured.SetNestedField(u.Object, "x", "metadata", "bogusMeta")
			return u
		},
		patch:      `{"bogus":2,"metadata":{"bogusMeta":"y"},"data":{"k":"w"}}`,
		applyTwice: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %[1]s\ndata:\n  k: a\n  k: b\n"},
	{name: "widget", gvr: widgetGVR,
		obj: func(ns, name string) *unstructured.Unstructured {
			u := newU(widgetGVK, ns, name, map[string]any{"color": "red", "bogus": "b"})
			u.Object["bogusTop"] = "t"
			_ = unstructured.SetNestedField(u.Object, "x", "metadata", "bogusMeta")
			return u
		},
		patch:      `{"bogusTop":"u","metadata":{"bogusMeta":"y"},"spec":{"color":"blue","bogus":"c"}}`,
		applyTwice: "apiVersion: fidelity.ctrlbugs.io/v1\nkind: Widget\nmetadata:\n  name: %[1]s\n  name: %[1]s\nspec:\n  color: red\n  color: blue\n"},
}

// clean is tg's object without the fields its schema does not know.
func (tg fvTarget) clean(ns, name string) *unstructured.Unstructured {
	u := tg.obj(ns, name)
	delete(u.Object, "bogus")
	delete(u.Object, "bogusTop")
	unstructured.RemoveNestedField(u.Object, "metadata", "bogusMeta")
	unstructured.RemoveNestedField(u.Object, "spec", "bogus")
	return u
}

var fvModes = []string{"", metav1.FieldValidationIgnore, metav1.FieldValidationWarn, metav1.FieldValidationStrict}

func fvModeName(m string) string {
	if m == "" {
		return "unset"
	}
	return m
}

// storedFacts records what the server kept of the object: its top-level
// keys, metadata keys it was not expected to add, and spec.
func storedFacts(o *Observation, k string, u *unstructured.Unstructured) {
	var keys []string
	for key := range u.Object {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	o.Add(k+".keys", strings.Join(keys, ","))
	_, has := u.Object["metadata"].(map[string]any)["bogusMeta"]
	o.Add(k+".bogusMeta", has)
	if s, ok := u.Object["spec"]; ok {
		o.Add(k+".spec", s)
	}
	if d, ok := u.Object["data"]; ok {
		o.Add(k+".data", d)
	}
}

func init() {
	for _, tg := range fvTargets {
		tg := tg
		// create: each mode, one object each.
		register("fieldvalidation/"+tg.name+"-create", func(ctx context.Context, c client.Client, ns string, o *Observation) {
			d, w := warnedDynamic(c, o)
			if d == nil {
				return
			}
			res := d.Resource(tg.gvr).Namespace(ns)
			for i, m := range fvModes {
				k := fvModeName(m)
				got, err := res.Create(ctx, tg.obj(ns, fmt.Sprintf("o%d", i)), metav1.CreateOptions{FieldManager: fieldOwner, FieldValidation: m})
				o.Err(k, err)
				o.Add(k+".warnings", w.take())
				if err == nil {
					storedFacts(o, k+".returned", got)
				}
			}
		})
		// update: an object created clean, then updated with unknown fields.
		register("fieldvalidation/"+tg.name+"-update", func(ctx context.Context, c client.Client, ns string, o *Observation) {
			d, w := warnedDynamic(c, o)
			if d == nil {
				return
			}
			res := d.Resource(tg.gvr).Namespace(ns)
			for i, m := range fvModes {
				k := fvModeName(m)
				name := fmt.Sprintf("o%d", i)
				cur, err := res.Create(ctx, tg.clean(ns, name), metav1.CreateOptions{FieldManager: fieldOwner})
				if !mustOK(o, k+".create", err) {
					return
				}
				w.take()
				u := tg.obj(ns, name)
				u.SetResourceVersion(cur.GetResourceVersion())
				got, err := res.Update(ctx, u, metav1.UpdateOptions{FieldManager: fieldOwner, FieldValidation: m})
				o.Err(k, err)
				o.Add(k+".warnings", w.take())
				if err == nil {
					storedFacts(o, k+".returned", got)
					o.RV(k, got)
				}
			}
		})
		// patches: merge and JSON patch carrying unknown fields.
		register("fieldvalidation/"+tg.name+"-patch", func(ctx context.Context, c client.Client, ns string, o *Observation) {
			d, w := warnedDynamic(c, o)
			if d == nil {
				return
			}
			res := d.Resource(tg.gvr).Namespace(ns)
			if _, err := res.Create(ctx, tg.clean(ns, "p"), metav1.CreateOptions{FieldManager: fieldOwner}); !mustOK(o, "create", err) {
				return
			}
			w.take()
			jsonPatch := `[{"op":"add","path":"/bogus","value":3},{"op":"add","path":"/metadata/bogusMeta","value":"z"}]`
			for _, m := range fvModes {
				k := fvModeName(m)
				got, err := res.Patch(ctx, "p", types.MergePatchType, []byte(tg.patch), metav1.PatchOptions{FieldManager: fieldOwner, FieldValidation: m})
				o.Err(k+".merge", err)
				o.Add(k+".merge.warnings", w.take())
				if err == nil {
					storedFacts(o, k+".merge.returned", got)
				}
				_, err = res.Patch(ctx, "p", types.JSONPatchType, []byte(jsonPatch), metav1.PatchOptions{FieldManager: fieldOwner, FieldValidation: m})
				o.Err(k+".json", err)
				o.Add(k+".json.warnings", w.take())
			}
		})
		// apply: an apply configuration with a key twice (unknown fields
		// are the field manager's to refuse, whatever the mode: 500).
		register("fieldvalidation/"+tg.name+"-apply", func(ctx context.Context, c client.Client, ns string, o *Observation) {
			d, w := warnedDynamic(c, o)
			if d == nil {
				return
			}
			res := d.Resource(tg.gvr).Namespace(ns)
			for i, m := range fvModes {
				k := fvModeName(m)
				name := fmt.Sprintf("o%d", i)
				got, err := res.Patch(ctx, name, types.ApplyPatchType, []byte(fmt.Sprintf(tg.applyTwice, name)), metav1.PatchOptions{FieldManager: "applier", FieldValidation: m})
				o.Err(k, err)
				o.Add(k+".warnings", w.take())
				if err == nil {
					storedFacts(o, k+".returned", got)
				}
			}
			body, err := tg.obj(ns, "unknown").MarshalJSON()
			if err != nil {
				o.Add("setup", err.Error())
				return
			}
			_, err = res.Patch(ctx, "unknown", types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "applier", FieldValidation: metav1.FieldValidationIgnore})
			o.Err("unknown-ignored", err)
			o.Add("unknown-ignored.warnings", w.take())
		})
	}
}

// rawClient is a REST client for this side that sends bodies as given.
func rawClient(c client.Client, o *Observation) (*rest.RESTClient, *warnings) {
	cfg, w := warnedConfig(c, o)
	if cfg == nil {
		return nil, nil
	}
	cfg.GroupVersion = &schema.GroupVersion{Version: "v1"}
	cfg.APIPath = "/api"
	cfg.NegotiatedSerializer = unstructuredSerializer()
	rc, err := rest.RESTClientFor(cfg)
	if !o.Err("restclient", err) {
		return nil, nil
	}
	return rc, w
}

// A JSON key twice in a body: Strict refuses it, Warn and the default warn
// ("duplicate field"), Ignore keeps the last value silently; on a
// built-in and a custom resource, on create and on update.
var _ = register("fieldvalidation/duplicate-fields", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	rc, w := rawClient(c, o)
	if rc == nil {
		return
	}
	for i, m := range fvModes {
		k := fvModeName(m)
		cmBody := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c%d","name":"c%d"},"data":{"k":"a"},"data":{"k":"b"}}`, i, i)
		req := rc.Post().AbsPath("/api/v1/namespaces/"+ns+"/configmaps").Param("fieldManager", fieldOwner).Body([]byte(cmBody)).SetHeader("Content-Type", "application/json")
		if m != "" {
			req = req.Param("fieldValidation", m)
		}
		raw, code := rawDo(ctx, req)
		o.Add(k+".cm.code", code)
		o.Add(k+".cm.warnings", w.take())
		if code < 300 {
			o.Add(k+".cm.data", jsonField(raw, "data"))
		} else {
			o.Add(k+".cm.status", statusFacts(raw))
		}
		wBody := fmt.Sprintf(`{"apiVersion":"fidelity.ctrlbugs.io/v1","kind":"Widget","metadata":{"name":"w%d"},"spec":{"color":"red","color":"blue"}}`, i)
		req = rc.Post().AbsPath("/apis/fidelity.ctrlbugs.io/v1/namespaces/"+ns+"/widgets").Param("fieldManager", fieldOwner).Body([]byte(wBody)).SetHeader("Content-Type", "application/json")
		if m != "" {
			req = req.Param("fieldValidation", m)
		}
		raw, code = rawDo(ctx, req)
		o.Add(k+".widget.code", code)
		o.Add(k+".widget.warnings", w.take())
		if code < 300 {
			o.Add(k+".widget.spec", jsonField(raw, "spec"))
		} else {
			o.Add(k+".widget.status", statusFacts(raw))
		}
	}
})

// An invalid fieldValidation value is refused before anything is decoded.
var _ = register("fieldvalidation/invalid-value", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d, w := warnedDynamic(c, o)
	if d == nil {
		return
	}
	_, err := d.Resource(cmGVR).Namespace(ns).Create(ctx, cmObj(ns, "a"), metav1.CreateOptions{FieldValidation: "Loose"})
	o.Err("create", err)
	o.Add("warnings", w.take())
	_, err = d.Resource(widgetGVR).Namespace(ns).Create(ctx, newU(widgetGVK, ns, "w", nil), metav1.CreateOptions{FieldValidation: "strict"})
	o.Err("create.widget", err)
})

// unstructuredSerializer decodes responses (and their Status errors) with
// client-go's scheme.
func unstructuredSerializer() runtime.NegotiatedSerializer {
	return clientgoscheme.Codecs.WithoutConversion()
}

// jsonField is body's top-level key k, decoded.
func jsonField(body []byte, k string) any {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return "undecodable: " + err.Error()
	}
	return m[k]
}

// rawDo sends req and returns the response body and HTTP status as they
// came (a Status body included).
func rawDo(ctx context.Context, req *rest.Request) ([]byte, int) {
	var code int
	res := req.Do(ctx)
	res.StatusCode(&code)
	raw, _ := res.Raw()
	return raw, code
}

// statusFacts is a Status body's reason and message.
func statusFacts(body []byte) string {
	return fmt.Sprintf("%v: %v", jsonField(body, "reason"), jsonField(body, "message"))
}

// A strategic merge patch (built-ins only) with unknown fields and a key
// twice: the patched map is converted to the Go type with unknown fields
// returned (strategicPatchObject), the patch's duplicates first.
var _ = register("fieldvalidation/cm-strategic-patch", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d, w := warnedDynamic(c, o)
	if d == nil {
		return
	}
	res := d.Resource(cmGVR).Namespace(ns)
	if _, err := res.Create(ctx, cmObj(ns, "p"), metav1.CreateOptions{FieldManager: fieldOwner}); !mustOK(o, "create", err) {
		return
	}
	for _, m := range fvModes {
		k := fvModeName(m)
		got, err := res.Patch(ctx, "p", types.StrategicMergePatchType, []byte(`{"bogus":1,"data":{"k":"x"},"data":{"k":"y"},"metadata":{"bogusMeta":"z"}}`), metav1.PatchOptions{FieldManager: fieldOwner, FieldValidation: m})
		o.Err(k, err)
		o.Add(k+".warnings", w.take())
		if err == nil {
			storedFacts(o, k+".returned", got)
		}
	}
	// A patch that does not decode strictly (not an object) is a 400
	// under Strict and Warn.
	_, err := res.Patch(ctx, "p", types.MergePatchType, []byte(`[1]`), metav1.PatchOptions{FieldManager: fieldOwner, FieldValidation: metav1.FieldValidationStrict})
	o.Err("merge-not-object", err)
})
