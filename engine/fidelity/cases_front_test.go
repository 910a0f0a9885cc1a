package fidelity

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// What the handler front (docs/handler-front.md) changes on the REST
// seam, each against the real server: a built-in kind's list encoded from
// its typed list (items without apiVersion or kind), a custom resource's
// list as an UnstructuredList (metadata.continue present, "" on a last
// page), Tables with each kind's columns, and the same of the direct
// client's unstructured lists.

// rawListFacts records whether the JSON list body's first item carries
// apiVersion, and whether its metadata has a continue field.
func rawListFacts(o *Observation, label string, body []byte) {
	var l struct {
		Metadata map[string]any   `json:"metadata"`
		Items    []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(body, &l); err != nil {
		o.Add(label+".decode", err.Error())
		return
	}
	_, cont := l.Metadata["continue"]
	o.Add(label+".metadata.continue", cont)
	if len(l.Items) > 0 {
		_, av := l.Items[0]["apiVersion"]
		_, k := l.Items[0]["kind"]
		o.Add(label+".item.apiVersion", av)
		o.Add(label+".item.kind", k)
	}
}

// frontSetup seeds ConfigMaps and a Widget in ns and returns a clientset
// on the side's rest.Config (nil when either fails, recorded).
func frontSetup(ctx context.Context, c client.Client, ns string, o *Observation) *kubernetes.Clientset {
	seedCMs(ctx, c, ns, o)
	if !o.Err("create widget", c.Create(ctx, widget(ns, "w"))) {
		return nil
	}
	return clientsetFor(c, o)
}

var _ = register("front/list-encoding", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	cs := frontSetup(ctx, c, ns, o)
	if cs == nil {
		return
	}
	// Through the REST seam, as JSON: the bytes.
	body, err := cs.CoreV1().RESTClient().Get().Namespace(ns).Resource("configmaps").SetHeader("Accept", "application/json").DoRaw(ctx)
	if o.Err("configmaps", err) {
		rawListFacts(o, "configmaps", body)
	}
	body, err = cs.CoreV1().RESTClient().Get().AbsPath("/apis", widgetGVK.Group, widgetGVK.Version, "namespaces", ns, "widgets").
		SetHeader("Accept", "application/json").DoRaw(ctx)
	if o.Err("widgets", err) {
		rawListFacts(o, "widgets", body)
	}
	// The same lists through the side's controller-runtime client, as
	// unstructured lists: what a controller holding one reads.
	for _, k := range []schema.GroupVersionKind{{Version: "v1", Kind: "ConfigMapList"}, widgetGVK.GroupVersion().WithKind("WidgetList")} {
		ul := &unstructured.UnstructuredList{}
		ul.SetGroupVersionKind(k)
		if o.Err(k.Kind, c.List(ctx, ul, client.InNamespace(ns))) {
			_, found, _ := unstructured.NestedFieldNoCopy(ul.Object, "metadata", "continue")
			o.Add(k.Kind+".metadata.continue", found)
		}
	}
})

var _ = register("front/table", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	cs := frontSetup(ctx, c, ns, o)
	if cs == nil {
		return
	}
	for _, p := range []string{"/api/v1/namespaces/" + ns + "/configmaps", "/apis/" + widgetGVK.Group + "/" + widgetGVK.Version + "/namespaces/" + ns + "/widgets"} {
		label := p[strings.LastIndex(p, "/")+1:]
		body, err := cs.CoreV1().RESTClient().Get().AbsPath(p).SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
		if !o.Err(label, err) {
			continue
		}
		t := &metav1.Table{}
		if err := json.Unmarshal(body, t); err != nil {
			o.Add(label+".decode", err.Error())
			continue
		}
		var cols []string
		for _, c := range t.ColumnDefinitions {
			cols = append(cols, c.Name+":"+c.Type)
		}
		o.Add(label+".kind", t.Kind)
		o.Add(label+".columns", strings.Join(cols, ","))
		o.Add(label+".rows", len(t.Rows))
	}
})

// A path no route serves, through the seam: a cluster-scoped kind under a
// namespace, a subresource a kind does not have.
var _ = register("front/no-route", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	cs := clientsetFor(c, o)
	if cs == nil {
		return
	}
	_, err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces", ns, "nodes", "n1").DoRaw(ctx)
	o.Err("namespaced node", err)
	_, err = cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces", ns, "configmaps", "x", "status").DoRaw(ctx)
	o.Err("configmap status", err)
})

// A read at a resourceVersion newer than the server's: kube's watch cache
// waits for it (up to 3 s) and answers 504 with retryAfterSeconds 1, which
// client-go would retry (here MaxRetries 0, to see the answer). The engine
// has no watch cache: its stand-in (apiserver freshness, and ListPage)
// answers the same at once.
var _ = register("front/too-new-resource-version", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	cs, l := seededClientset(ctx, c, ns, o)
	if l == nil {
		return
	}
	rv, err := strconv.ParseUint(l.ResourceVersion, 10, 64)
	if !o.Err("rv", err) {
		return
	}
	future := strconv.FormatUint(rv+100000, 10)
	for _, r := range []struct {
		label string
		req   func() error
	}{
		{"get-too-new", func() error {
			return cs.CoreV1().RESTClient().Get().Namespace(ns).Resource("configmaps").Name("a-red-small").
				Param("resourceVersion", future).MaxRetries(0).Do(ctx).Error()
		}},
		{"list-too-new", func() error {
			return cs.CoreV1().RESTClient().Get().Namespace(ns).Resource("configmaps").
				Param("resourceVersion", future).Param("resourceVersionMatch", "NotOlderThan").MaxRetries(0).Do(ctx).Error()
		}},
	} {
		err := r.req()
		o.Err(r.label, err)
		delay, ok := apierrors.SuggestsClientDelay(err)
		o.Add(r.label+".retryAfter", fmt.Sprint(delay, ok))
	}
})

// watch/named-path: a watch on the deprecated /watch/ path that names an
// object watches that object only (kube's handler makes the name a
// metadata.name field selector); the seam watched the whole collection.
var _ = register("watch/named-path", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	cs, l := seededClientset(ctx, c, ns, o)
	if l == nil {
		return
	}
	w, err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/watch/namespaces", ns, "configmaps", "b-blue").
		Param("resourceVersion", l.ResourceVersion).Watch(ctx)
	if !o.Err("watch.named", err) {
		return
	}
	defer w.Stop()
	for _, n := range []string{"a-red-small", "b-blue"} {
		if _, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, n, types.MergePatchType, []byte(`{"data":{"k":"v"}}`), metav1.PatchOptions{}); !o.Err("patch."+n, err) {
			return
		}
	}
	ev, _ := nextEvent(w, false)
	o.Add("named.first", typedEventFact(ev))
	// Nothing else: the other object's change is not this watch's.
	if _, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, "b-blue", types.MergePatchType, []byte(`{"data":{"k":"w"}}`), metav1.PatchOptions{}); !o.Err("patch.b-blue.again", err) {
		return
	}
	ev, _ = nextEvent(w, false)
	o.Add("named.second", typedEventFact(ev))
	_, err = cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/watch/namespaces", ns, "configmaps", "b-blue").
		Param("resourceVersion", l.ResourceVersion).Param("fieldSelector", "metadata.name=d-none").Watch(ctx)
	o.Err("watch.named-other-selector", err)
})

// front/watch-frames: a watch through the seam is kube's watch handler's:
// a client asking for protobuf gets protobuf frames (the seam's own path
// answered JSON), and a metadata client's events are
// PartialObjectMetadata.
var _ = register("front/watch-frames", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	cs, l := seededClientset(ctx, c, ns, o)
	if l == nil {
		return
	}
	hc, err := rest.HTTPClientFor(restConfigs[c])
	if !o.Err("http client", err) {
		return
	}
	u := strings.TrimSuffix(restConfigs[c].Host, "/") + "/api/v1/namespaces/" + ns + "/configmaps?watch=true&resourceVersion=" + l.ResourceVersion
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if !o.Err("request", err) {
		return
	}
	req.Header.Set("Accept", "application/vnd.kubernetes.protobuf, application/json")
	resp, err := hc.Do(req)
	if !o.Err("watch.protobuf", err) {
		return
	}
	_ = resp.Body.Close()
	o.Add("protobuf.status", resp.StatusCode)
	o.Add("protobuf.content-type", resp.Header.Get("Content-Type"))

	mc, err := metadata.NewForConfig(restConfigs[c])
	if !o.Err("metadata client", err) {
		return
	}
	w, err := mc.Resource(corev1.SchemeGroupVersion.WithResource("configmaps")).Namespace(ns).
		Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
	if !o.Err("watch.metadata", err) {
		return
	}
	defer w.Stop()
	if _, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, "b-blue", types.MergePatchType, []byte(`{"data":{"k":"v"}}`), metav1.PatchOptions{}); !o.Err("patch", err) {
		return
	}
	ev, _ := nextEvent(w, false)
	if pom, ok := ev.Object.(*metav1.PartialObjectMetadata); ok {
		o.Add("metadata.event", fmt.Sprintf("%s %s %s %s", ev.Type, pom.APIVersion, pom.Kind, pom.Name))
	} else {
		o.Add("metadata.event", fmt.Sprintf("%s %T", ev.Type, ev.Object))
	}
})

// typedEventFact is an event's type, and the name and data of the
// ConfigMap it carries.
func typedEventFact(ev watch.Event) string {
	if cm, ok := ev.Object.(*corev1.ConfigMap); ok {
		return fmt.Sprintf("%s %s %v", ev.Type, cm.Name, cm.Data)
	}
	return eventFact(ev)
}

// front/delete-bodies: deletes through the seam are kube's delete and
// deletecollection handlers', as raw HTTP clients see them: a deletion is
// a Success Status naming the object's resource, group and uid; an object
// finalizers or a grace period hold is returned as it now is (202 when
// orphanDependents is false); a deletecollection answers the list of what
// it deleted, and with a limit deletes that page only. The seam's own path
// answered a Status without the uid, a held pod as a Status, a collection
// as a Status, and deleted every object whatever the limit.
var _ = register("front/delete-bodies", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	do := rawJSON(ctx, c, o, nil)
	if do == nil {
		return
	}
	cms := "/api/v1/namespaces/" + ns + "/configmaps"

	plain := cm(ns, "plain", nil)
	if !o.Err("create.plain", c.Create(ctx, plain, own)) {
		return
	}
	if out := do("plain", http.MethodDelete, cms+"/plain", ""); out != nil {
		details, _ := out["details"].(map[string]any)
		o.Add("plain.status", out["status"])
		o.Add("plain.details", fmt.Sprintf("name=%v group=%v kind=%v", details["name"], details["group"], details["kind"]))
		o.Add("plain.details.uid-matches", details["uid"] == string(plain.UID))
	}

	held := cm(ns, "held", nil)
	held.Finalizers = []string{"example.com/hold"}
	if !o.Err("create.held", c.Create(ctx, held, own)) {
		return
	}
	if out := do("held", http.MethodDelete, cms+"/held", ""); out != nil {
		m, _ := out["metadata"].(map[string]any)
		o.Add("held.name", m["name"])
		o.Add("held.deletionTimestamp", m["deletionTimestamp"] != nil)
		o.Add("held.finalizers", m["finalizers"])
	}
	do("held.cascade-old-way", http.MethodDelete, cms+"/held", `{"orphanDependents":false}`)
	mustOK(o, "release.held", c.Patch(ctx, held, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))))

	if !defaultSA(ctx, c, ns, o) {
		return
	}
	p := pod(ns, "bound", nil, corev1.ResourceRequirements{})
	p.Spec.NodeName = "node-a"
	if !o.Err("create.bound", c.Create(ctx, p, own)) {
		return
	}
	if out := do("bound", http.MethodDelete, "/api/v1/namespaces/"+ns+"/pods/bound", ""); out != nil {
		m, _ := out["metadata"].(map[string]any)
		o.Add("bound.deletionGracePeriodSeconds", m["deletionGracePeriodSeconds"])
	}
	do("bound.now", http.MethodDelete, "/api/v1/namespaces/"+ns+"/pods/bound", `{"gracePeriodSeconds":0}`)

	for _, n := range []string{"x-1", "x-2", "x-3"} {
		obj := cm(ns, n, nil)
		obj.Labels = map[string]string{"batch": "x"}
		if !o.Err("create."+n, c.Create(ctx, obj, own)) {
			return
		}
	}
	if out := do("collection.limit", http.MethodDelete, cms+"?labelSelector=batch%3Dx&limit=2", ""); out != nil {
		o.Add("collection.limit.apiVersion", out["apiVersion"])
		o.Add("collection.limit.items", itemNames(out))
	}
	left := &corev1.ConfigMapList{}
	if o.Err("collection.limit.list", c.List(ctx, left, client.InNamespace(ns), client.MatchingLabels{"batch": "x"})) {
		o.Add("collection.limit.left", len(left.Items))
	}
	if out := do("collection", http.MethodDelete, cms+"?labelSelector=batch%3Dx", ""); out != nil {
		o.Add("collection.items", itemNames(out))
	}

	w := widget(ns, "w")
	if !o.Err("create.widget", c.Create(ctx, w, own)) {
		return
	}
	if out := do("widget", http.MethodDelete, "/apis/"+widgetGVK.Group+"/"+widgetGVK.Version+"/namespaces/"+ns+"/widgets/w", ""); out != nil {
		details, _ := out["details"].(map[string]any)
		o.Add("widget.details", fmt.Sprintf("name=%v group=%v kind=%v", details["name"], details["group"], details["kind"]))
		o.Add("widget.details.uid-matches", details["uid"] == string(w.GetUID()))
	}
})

// rawJSON returns a function that sends a request with body (JSON, if
// any, unless a content type is given) to the server of c's side
// (restConfigs) as a raw HTTP client does, with hdr's headers, adds its
// status code, warnings and kind to o under step and returns the decoded
// JSON answer (nil when it failed, recorded in o); nil when the side has
// no rest.Config or it gives no HTTP client.
func rawJSON(ctx context.Context, c client.Client, o *Observation, hdr http.Header) func(step, method, path, body string, contentType ...string) map[string]any {
	cfg := restConfigs[c]
	if cfg == nil {
		o.Add("setup", "no rest.Config for this side")
		return nil
	}
	hc, err := rest.HTTPClientFor(cfg)
	if !o.Err("http client", err) {
		return nil
	}
	return func(step, method, path, body string, contentType ...string) map[string]any {
		req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(cfg.Host, "/")+path, strings.NewReader(body))
		if !o.Err(step+".request", err) {
			return nil
		}
		for k, v := range hdr {
			req.Header[k] = v
		}
		req.Header.Set("Accept", "application/json")
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for _, ct := range contentType {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := hc.Do(req)
		if !o.Err(step, err) {
			return nil
		}
		defer func() { _ = resp.Body.Close() }()
		o.Add(step+".code", resp.StatusCode)
		if w := resp.Header.Values("Warning"); len(w) > 0 {
			o.Add(step+".warnings", w)
		}
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); !o.Err(step+".decode", err) {
			return nil
		}
		o.Add(step+".kind", out["kind"])
		return out
	}
}

// front/create-bodies: creates through the seam are kube's create
// handler's, as raw HTTP clients see them: a body whose namespace is not
// the request's is refused (400; the seam's own path stored it in the
// body's namespace); a write without fieldManager is managed by the
// User-Agent's prefix (the own path: the seam client's name); strict field
// validation refuses an unknown field, and the default (Warn) warns and
// drops it; a dry run answers the object without storing it; a generated
// name is the prefix and five characters.
var _ = register("front/create-bodies", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	do := rawJSON(ctx, c, o, http.Header{"User-Agent": {"fidelity-writer/1.0 (linux/amd64)"}})
	if do == nil {
		return
	}
	cms := "/api/v1/namespaces/" + ns + "/configmaps"
	body := func(meta string) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{` + meta + `},"data":{"k":"v"}}`
	}
	if out := do("plain", http.MethodPost, cms, body(`"name":"plain"`)); out != nil {
		m, _ := out["metadata"].(map[string]any)
		mf, _ := m["managedFields"].([]any)
		for i, e := range mf {
			e, _ := e.(map[string]any)
			o.Add(fmt.Sprintf("plain.managedFields[%d]", i), fmt.Sprintf("manager=%v operation=%v", e["manager"], e["operation"]))
		}
		o.Add("plain.uid-set", m["uid"] != nil)
	}
	if out := do("other-namespace", http.MethodPost, cms, body(`"name":"elsewhere","namespace":"default"`)); out != nil {
		o.Add("other-namespace.message", out["message"])
	}
	stray := &corev1.ConfigMap{}
	o.Add("other-namespace.stored", c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "elsewhere"}, stray) == nil)
	if stray.UID != "" {
		mustOK(o, "other-namespace.cleanup", c.Delete(ctx, stray))
	}
	if out := do("strict", http.MethodPost, cms+"?fieldValidation=Strict", body(`"name":"strict","bogus":1`)); out != nil {
		o.Add("strict.reason", out["reason"])
		o.Add("strict.message", out["message"])
	}
	if out := do("warn", http.MethodPost, cms, body(`"name":"warn","bogus":1`)); out != nil {
		m, _ := out["metadata"].(map[string]any)
		o.Add("warn.name", m["name"])
	}
	if out := do("dry-run", http.MethodPost, cms+"?dryRun=All", body(`"name":"dry"`)); out != nil {
		m, _ := out["metadata"].(map[string]any)
		o.Add("dry-run.name", m["name"])
		o.Add("dry-run.resourceVersion", m["resourceVersion"])
	}
	o.Add("dry-run.stored", c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "dry"}, &corev1.ConfigMap{}) == nil)
	if out := do("generated", http.MethodPost, cms, body(`"generateName":"gen-"`)); out != nil {
		m, _ := out["metadata"].(map[string]any)
		name, _ := m["name"].(string)
		o.Add("generated.name", fmt.Sprintf("prefix=%v length=%d", strings.HasPrefix(name, "gen-"), len(name)))
	}
	// A CRD's defaults (spec.conversion) are applied as its body is
	// decoded, before the field manager: its writer manages them.
	group := ns + ".fidelity.io"
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"things.` + group + `"},
		"spec":{"group":"` + group + `","scope":"Namespaced","names":{"plural":"things","kind":"Thing"},
		"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`
	if out := do("crd", http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd); out != nil {
		addManagedSpec(o, "crd", out)
		del := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "things." + group}}
		mustOK(o, "crd.cleanup", c.Delete(ctx, del))
	}
})

// front/cr-write-bodies: a custom resource's writes through the seam are
// the CRD handler's, as raw HTTP clients see them: the body is decoded as
// apiextensions-apiserver decodes it (an unknown field pruned with a
// warning, or refused by Strict; the schema's defaults, managed by the
// writer), a body naming another object is refused, a status patch, a
// server-side apply that creates and one that conflicts, and a strategic
// merge patch, which a custom resource does not take (415).
var _ = register("front/cr-write-bodies", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	do := rawJSON(ctx, c, o, http.Header{"User-Agent": {"fidelity-writer/1.0 (linux/amd64)"}})
	if do == nil {
		return
	}
	ws := "/apis/" + widgetGVK.Group + "/" + widgetGVK.Version + "/namespaces/" + ns + "/widgets"
	body := func(name, spec string) string {
		return `{"apiVersion":"` + widgetGVK.GroupVersion().String() + `","kind":"Widget","metadata":{"name":"` + name + `"},"spec":` + spec + `}`
	}
	if out := do("create", http.MethodPost, ws, body("w", `{"color":"red","bogus":1}`)); out != nil {
		o.Add("create.spec", out["spec"])
		addManagedSpec(o, "create", out)
	}
	if out := do("strict", http.MethodPost, ws+"?fieldValidation=Strict", body("strict", `{"bogus":1}`)); out != nil {
		o.Add("strict.message", out["message"])
	}
	if out := do("renamed", http.MethodPut, ws+"/w", body("other", `{"color":"blue"}`)); out != nil {
		o.Add("renamed.message", out["message"])
	}
	if out := do("status", http.MethodPatch, ws+"/w/status", `{"status":{"phase":"Ready"},"spec":{"color":"ignored"}}`, "application/merge-patch+json"); out != nil {
		o.Add("status.status", out["status"])
		o.Add("status.spec", out["spec"])
	}
	apply := func(step, manager, color string) {
		if out := do(step, http.MethodPatch, ws+"/applied?fieldManager="+manager, body("applied", `{"color":"`+color+`"}`), "application/apply-patch+yaml"); out != nil {
			o.Add(step+".spec", out["spec"])
			o.Add(step+".message", out["message"])
		}
	}
	apply("apply", "a", "red")
	apply("apply.conflict", "b", "blue")
	if out := do("smp", http.MethodPatch, ws+"/w", `{"spec":{"color":"green"}}`, "application/strategic-merge-patch+json"); out != nil {
		o.Add("smp.message", out["message"])
	}
})

// addManagedSpec adds to o, under step, each managed fields entry of obj
// (a decoded JSON object): its manager and the fields under spec it owns.
func addManagedSpec(o *Observation, step string, obj map[string]any) {
	m, _ := obj["metadata"].(map[string]any)
	mf, _ := m["managedFields"].([]any)
	for i, e := range mf {
		e, _ := e.(map[string]any)
		fields, _ := e["fieldsV1"].(map[string]any)
		spec, _ := fields["f:spec"].(map[string]any)
		o.Add(fmt.Sprintf("%s.managedFields[%d]", step, i), fmt.Sprintf("manager=%v spec=%v", e["manager"], slices.Sorted(maps.Keys(spec))))
	}
}

// itemNames are the names of a list's items, as a decoded JSON list has
// them.
func itemNames(list map[string]any) []string {
	items, _ := list["items"].([]any)
	names := []string{}
	for _, it := range items {
		m, _ := it.(map[string]any)
		md, _ := m["metadata"].(map[string]any)
		names = append(names, fmt.Sprint(md["name"]))
	}
	return names
}

// seededClientset seeds the case's ConfigMaps (seedCMs) and lists them
// through a clientset on the case's side; the list is nil when that
// failed.
func seededClientset(ctx context.Context, c client.Client, ns string, o *Observation) (*kubernetes.Clientset, *corev1.ConfigMapList) {
	seedCMs(ctx, c, ns, o)
	cs := clientsetFor(c, o)
	if cs == nil {
		return nil, nil
	}
	l, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if !o.Err("list", err) {
		return nil, nil
	}
	return cs, l
}
