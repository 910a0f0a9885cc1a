package fidelity

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
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
	seedCMs(ctx, c, ns, o)
	cs := clientsetFor(c, o)
	if cs == nil {
		return
	}
	l, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if !o.Err("list-now", err) {
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
	seedCMs(ctx, c, ns, o)
	cs := clientsetFor(c, o)
	if cs == nil {
		return
	}
	l, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if !o.Err("list", err) {
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
	seedCMs(ctx, c, ns, o)
	cs := clientsetFor(c, o)
	if cs == nil {
		return
	}
	l, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if !o.Err("list", err) {
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
