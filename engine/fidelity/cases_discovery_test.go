package fidelity

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// What the process model's REST seam serves below controller-runtime:
// discovery (aggregated and legacy), watch with sendInitialEvents and
// bookmarks, and 410 Expired on a resourceVersion from before a kind's
// watch cache began. Writes in the watch cases go through the same REST
// config as the watch (the engine side flushes its watches after each
// request, as the explorer does at its quiescent points).

var cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func dynamicFor(c client.Client, o *Observation) dynamic.Interface {
	cfg := restConfigs[c]
	if cfg == nil {
		o.Add("setup", "no rest.Config for this side")
		return nil
	}
	d, err := dynamic.NewForConfig(cfg)
	if !o.Err("dynamic", err) {
		return nil
	}
	return d
}

// discoveryFacts records, for each resource wanted, what discovery says of
// it: kind (and group/version where it differs), scope, sorted verbs and
// the singular name.
func discoveryFacts(o *Observation, prefix string, lists []*metav1.APIResourceList, wanted []string) {
	byName := map[string]metav1.APIResource{}
	for _, l := range lists {
		for _, r := range l.APIResources {
			byName[l.GroupVersion+" "+r.Name] = r
		}
	}
	for _, w := range wanted {
		r, ok := byName[w]
		if !ok {
			o.Add(prefix+w, "absent")
			continue
		}
		verbs := slices.Clone([]string(r.Verbs))
		slices.Sort(verbs)
		kind := r.Kind
		if r.Group != "" || r.Version != "" {
			kind = r.Group + "/" + r.Version + " " + kind
		}
		v := fmt.Sprintf("kind=%s namespaced=%v verbs=%s", kind, r.Namespaced, strings.Join(verbs, ","))
		if _, res, _ := strings.Cut(w, " "); !strings.Contains(res, "/") {
			v += " singular=" + r.SingularName
		}
		o.Add(prefix+w, v)
	}
}

var discoveryWanted = []string{
	"v1 configmaps", "v1 pods", "v1 pods/status", "v1 pods/binding", "v1 pods/eviction", "v1 namespaces", "v1 namespaces/status", "v1 namespaces/finalize",
	"apps/v1 deployments", "apps/v1 deployments/status", "apps/v1 deployments/scale",
	"fidelity.ctrlbugs.io/v1 widgets", "fidelity.ctrlbugs.io/v1 widgets/status", "fidelity.ctrlbugs.io/v1 gadgets",
	"fidelity.ctrlbugs.io/v1 scalers", "fidelity.ctrlbugs.io/v1 scalers/status", "fidelity.ctrlbugs.io/v1 scalers/scale",
}

var _ = register("discovery/aggregated", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	cfg := restConfigs[c]
	if cfg == nil {
		o.Add("setup", "no rest.Config for this side")
		return
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if !o.Err("client", err) {
		return
	}
	// client-go asks for apidiscovery.k8s.io/v2 first; what came back:
	raw := dc.RESTClient().Get().AbsPath("/apis").SetHeader("Accept", discovery.AcceptV2+","+discovery.AcceptV1).Do(ctx)
	var ct string
	raw.ContentType(&ct)
	o.Add("apis.contentType", strings.Split(ct, ";g=")[0]+map[bool]string{true: ";aggregated v2", false: ""}[strings.Contains(ct, "as=APIGroupDiscoveryList")])
	_, lists, err := dc.ServerGroupsAndResources()
	if !o.Err("serverGroupsAndResources", err) {
		return
	}
	discoveryFacts(o, "agg.", lists, discoveryWanted)
})

var _ = register("discovery/legacy-group-version", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	cfg := restConfigs[c]
	if cfg == nil {
		o.Add("setup", "no rest.Config for this side")
		return
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if !o.Err("client", err) {
		return
	}
	var lists []*metav1.APIResourceList
	for _, gv := range []string{"v1", "apps/v1", "fidelity.ctrlbugs.io/v1"} {
		l, err := dc.ServerResourcesForGroupVersion(gv)
		if !o.Err(gv, err) {
			continue
		}
		lists = append(lists, l)
	}
	discoveryFacts(o, "legacy.", lists, discoveryWanted)
	_, err = dc.ServerResourcesForGroupVersion("fidelity.ctrlbugs.io/v9")
	o.Err("unserved-version", err)
})

// nextEvent waits for the next event that is not a bookmark (unless
// bookmarks is set), up to 10 s.
func nextEvent(w watch.Interface, bookmarks bool) (watch.Event, bool) {
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return watch.Event{}, false
			}
			if ev.Type == watch.Bookmark && !bookmarks {
				continue
			}
			return ev, true
		case <-timeout:
			return watch.Event{Type: "TIMEOUT"}, true
		}
	}
}

func eventFact(ev watch.Event) string {
	if u, ok := ev.Object.(*unstructured.Unstructured); ok {
		return string(ev.Type) + " " + u.GetName()
	}
	if st, ok := ev.Object.(*metav1.Status); ok {
		return fmt.Sprintf("%s %d %s", ev.Type, st.Code, st.Reason)
	}
	return string(ev.Type)
}

func cmObj(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace(ns)
	u.SetName(name)
	_ = unstructured.SetNestedStringMap(u.Object, map[string]string{"k": "v"}, "data")
	return u
}

var _ = register("watch/initial-events-bookmark", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := dynamicFor(c, o)
	if d == nil {
		return
	}
	cms := d.Resource(cmGVR).Namespace(ns)
	var lastRV string
	for _, n := range []string{"b", "a"} {
		u, err := cms.Create(ctx, cmObj(ns, n), metav1.CreateOptions{})
		if !o.Err("create."+n, err) {
			return
		}
		lastRV = u.GetResourceVersion()
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{SendInitialEvents: ptrTrue(), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	if !o.Err("watch", err) {
		return
	}
	defer w.Stop()
	for i := 0; i < 3; i++ {
		ev, ok := nextEvent(w, true)
		if !ok {
			o.Add(fmt.Sprintf("initial.%d", i), "stream ended")
			return
		}
		o.Add(fmt.Sprintf("initial.%d", i), eventFact(ev))
		if ev.Type == watch.Bookmark {
			u := ev.Object.(*unstructured.Unstructured)
			o.Add("bookmark.initialEventsEnd", u.GetAnnotations()[metav1.InitialEventsAnnotationKey])
			o.Add("bookmark.rvNotOlderThanLastWrite", rvAtLeast(u.GetResourceVersion(), lastRV))
			break
		}
	}
	if _, err := cms.Create(ctx, cmObj(ns, "c"), metav1.CreateOptions{}); !o.Err("create.c", err) {
		return
	}
	ev, _ := nextEvent(w, false)
	o.Add("after.create", eventFact(ev))
	if _, err := cms.Patch(ctx, "c", types.MergePatchType, []byte(`{"data":{"k":"w"}}`), metav1.PatchOptions{}); !o.Err("patch.c", err) {
		return
	}
	ev, _ = nextEvent(w, false)
	o.Add("after.patch", eventFact(ev))
	if !o.Err("delete.c", cms.Delete(ctx, "c", metav1.DeleteOptions{})) {
		return
	}
	ev, _ = nextEvent(w, false)
	o.Add("after.delete", eventFact(ev))
})

var _ = register("watch/from-resource-version", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := dynamicFor(c, o)
	if d == nil {
		return
	}
	cms := d.Resource(cmGVR).Namespace(ns)
	if _, err := cms.Create(ctx, cmObj(ns, "before"), metav1.CreateOptions{}); !o.Err("create.before", err) {
		return
	}
	l, err := cms.List(ctx, metav1.ListOptions{})
	if !o.Err("list", err) {
		return
	}
	for _, n := range []string{"x", "y"} {
		if _, err := cms.Create(ctx, cmObj(ns, n), metav1.CreateOptions{}); !o.Err("create."+n, err) {
			return
		}
	}
	// Events since the list: what was created after it, not before.
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: l.GetResourceVersion()})
	if !o.Err("watch", err) {
		return
	}
	defer w.Stop()
	for i := 0; i < 2; i++ {
		ev, _ := nextEvent(w, false)
		o.Add(fmt.Sprintf("event.%d", i), eventFact(ev))
	}
	// A label selector: only matching objects, and an object that stops
	// matching is DELETED for the watcher.
	sel, err := cms.Watch(ctx, metav1.ListOptions{LabelSelector: "team=a", ResourceVersion: l.GetResourceVersion()})
	if !o.Err("watch.selector", err) {
		return
	}
	defer sel.Stop()
	if _, err := cms.Patch(ctx, "x", types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"a"}}}`), metav1.PatchOptions{}); !o.Err("label.x", err) {
		return
	}
	ev, _ := nextEvent(sel, false)
	o.Add("selector.labelled", eventFact(ev))
	if _, err := cms.Patch(ctx, "x", types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"b"}}}`), metav1.PatchOptions{}); !o.Err("relabel.x", err) {
		return
	}
	ev, _ = nextEvent(sel, false)
	o.Add("selector.relabelled", eventFact(ev))
})

var _ = register("watch/expired-before-kind-served", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := dynamicFor(c, o)
	if d == nil {
		return
	}
	before, err := d.Resource(cmGVR).Namespace(ns).Create(ctx, cmObj(ns, "before"), metav1.CreateOptions{})
	if !o.Err("create.before", err) {
		return
	}
	group := ns + ".ctrlbugs.dev"
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gizmos." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gizmos", Singular: "gizmo", Kind: "Gizmo", ListKind: "GizmoList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptrTrue()}}}},
		},
	}
	if !mustOK(o, "crd.create", c.Create(ctx, crd, own)) {
		return
	}
	defer func() { o.Err("crd.delete", c.Delete(ctx, crd)) }()
	gizmos := d.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gizmos"}).Namespace(ns)
	// Served within milliseconds on the real server: list until it is.
	var l *unstructured.UnstructuredList
	deadline := time.Now().Add(10 * time.Second)
	for {
		l, err = gizmos.List(ctx, metav1.ListOptions{})
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !o.Err("list", err) {
		return
	}
	w, err := gizmos.Watch(ctx, metav1.ListOptions{ResourceVersion: before.GetResourceVersion()})
	if !o.Err("watch.old", err) {
		return
	}
	ev, _ := nextEvent(w, false)
	o.Add("old.first", eventFact(ev))
	if st, ok := ev.Object.(*metav1.Status); ok {
		err := apierrors.FromObject(st)
		o.Add("old.expired", apierrors.IsResourceExpired(err))
		o.Add("old.message", strings.HasPrefix(st.Message, "too old resource version: "+before.GetResourceVersion()+" ("))
	}
	_, open := <-w.ResultChan()
	o.Add("old.streamEnded", !open)
	w.Stop()
	w2, err := gizmos.Watch(ctx, metav1.ListOptions{ResourceVersion: l.GetResourceVersion()})
	if !o.Err("watch.fromList", err) {
		return
	}
	defer w2.Stop()
	g := &unstructured.Unstructured{}
	g.SetAPIVersion(group + "/v1")
	g.SetKind("Gizmo")
	g.SetName("g")
	if _, err := gizmos.Create(ctx, g, metav1.CreateOptions{}); !o.Err("create.gizmo", err) {
		return
	}
	ev, _ = nextEvent(w2, false)
	o.Add("fromList.first", eventFact(ev))
})

// rvAtLeast compares two resourceVersions numerically (both servers use
// etcd-style integers; clients must not, but the suite may).
func rvAtLeast(a, b string) bool {
	var x, y int64
	_, _ = fmt.Sscan(a, &x)
	_, _ = fmt.Sscan(b, &y)
	return x >= y
}

// A watch of a built-in kind from resourceVersion 1, older than the API
// server's start: the suite's real server streams the kind's events since
// (no compaction has run), as the engine does (it keeps its whole history
// and serves built-in kinds from revision 0). Pinned because a real
// server that has compacted answers 410 Expired: the engine never
// compacts (apiserver/doc.go).
var _ = register("watch/builtin-from-rv-1", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := dynamicFor(c, o)
	if d == nil {
		return
	}
	cms := d.Resource(cmGVR).Namespace(ns)
	if _, err := cms.Create(ctx, cmObj(ns, "a"), metav1.CreateOptions{}); !o.Err("create", err) {
		return
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: "1"})
	if !o.Err("watch", err) {
		return
	}
	defer w.Stop()
	ev, _ := nextEvent(w, false)
	o.Add("first", eventFact(ev))
})

// watch/no-resource-version: a watch without a resourceVersion, and one
// at "0", start with a synthetic ADDED event for every object there is,
// then what follows (kube-apiserver's "Get State and Start at Most
// Recent" and "Start at Any"; where it serves watch-lists it defaults them
// to sendInitialEvents, which without allowWatchBookmarks sends the same
// events and no bookmark).
var _ = register("watch/no-resource-version", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	d := dynamicFor(c, o)
	if d == nil {
		return
	}
	cms := d.Resource(cmGVR).Namespace(ns)
	for _, n := range []string{"a", "b"} {
		if _, err := cms.Create(ctx, cmObj(ns, n), metav1.CreateOptions{}); !o.Err("create."+n, err) {
			return
		}
	}
	for _, tc := range []struct {
		name, rv, next string
		existing       int
	}{{"unset", "", "c", 2}, {"zero", "0", "d", 3}} {
		w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: tc.rv})
		if !o.Err(tc.name+".watch", err) {
			return
		}
		var first []string
		for range tc.existing {
			ev, _ := nextEvent(w, false)
			first = append(first, eventFact(ev))
		}
		sort.Strings(first)
		o.Add(tc.name+".initial", strings.Join(first, ", "))
		if _, err := cms.Create(ctx, cmObj(ns, tc.next), metav1.CreateOptions{}); !o.Err(tc.name+".create", err) {
			w.Stop()
			return
		}
		ev, _ := nextEvent(w, false)
		o.Add(tc.name+".next", eventFact(ev))
		w.Stop()
	}
})
