package ctrlsim_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
)

// TestRESTSeam: clients upstream builds from the manager's rest.Config —
// client-go's typed clientset, dynamic and metadata clients, discovery —
// reach the engine in process, their calls recorded as the process's, with
// kube-apiserver's errors.
func TestRESTSeam(t *testing.T) {
	f := newFixture(t, ctrlsim.ManagerOptions{})
	ctx := t.Context()
	cfg := f.mgr.GetConfig()

	cs, err := kubernetes.NewForConfig(cfg)
	must(t, err)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"team": "x"}}, Data: map[string]string{"k": "v"}}
	created, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{FieldManager: "seam"})
	must(t, err)
	if created.ResourceVersion == "" || created.UID == "" || created.Namespace != "default" {
		t.Fatalf("created %+v", created.ObjectMeta)
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("second create: %v, want AlreadyExists", err)
	}
	got, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "a", metav1.GetOptions{})
	must(t, err)
	got.Data["k"] = "w"
	_, err = cs.CoreV1().ConfigMaps("default").Update(ctx, got, metav1.UpdateOptions{})
	must(t, err)
	// A stale update conflicts, as on a real server.
	if _, err := cs.CoreV1().ConfigMaps("default").Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("stale update: %v, want Conflict", err)
	}
	_, err = cs.CoreV1().ConfigMaps("default").Patch(ctx, "a", types.MergePatchType, []byte(`{"data":{"p":"1"}}`), metav1.PatchOptions{})
	must(t, err)
	l, err := cs.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{LabelSelector: "team=x"})
	must(t, err)
	if len(l.Items) != 1 || l.Items[0].Data["p"] != "1" || l.Items[0].Data["k"] != "w" || l.ResourceVersion == "" {
		t.Fatalf("list %+v", l)
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "nope", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get missing: %v, want NotFound", err)
	}

	dyn, err := dynamic.NewForConfig(cfg)
	must(t, err)
	cmGVR := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	u, err := dyn.Resource(cmGVR).Namespace("default").Get(ctx, "a", metav1.GetOptions{})
	must(t, err)
	if v, _, _ := unstructured.NestedString(u.Object, "data", "p"); v != "1" {
		t.Errorf("dynamic get %v", u.Object)
	}

	md, err := metadata.NewForConfig(cfg)
	must(t, err)
	ml, err := md.Resource(cmGVR).Namespace("default").List(ctx, metav1.ListOptions{})
	must(t, err)
	if len(ml.Items) != 1 || ml.Items[0].Name != "a" || ml.Items[0].Labels["team"] != "x" {
		t.Errorf("metadata list %+v", ml.Items)
	}

	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	must(t, err)
	rl, err := dc.ServerResourcesForGroupVersion("apps/v1")
	must(t, err)
	var deployments bool
	for _, r := range rl.APIResources {
		deployments = deployments || (r.Name == "deployments" && r.Kind == "Deployment" && r.Namespaced)
	}
	if !deployments {
		t.Errorf("apps/v1 resources %+v", rl.APIResources)
	}
	groups, err := dc.ServerGroups()
	must(t, err)
	if len(groups.Groups) == 0 {
		t.Error("no API groups discovered")
	}

	must(t, cs.CoreV1().ConfigMaps("default").Delete(ctx, "a", metav1.DeleteOptions{}))
	if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after delete: %v", err)
	}

	// Every resource call went through the process's client, recorded.
	var verbs []string
	for _, op := range f.hooks.ops {
		if op.Controller != "ctl" || op.Cached {
			t.Errorf("op %+v: not the process's live call", op)
		}
		verbs = append(verbs, op.Verb.String())
	}
	if got, want := strings.Join(verbs, " "), "create create get update update patch list get get list delete get"; got != want {
		t.Errorf("recorded %q, want %q", got, want)
	}
}

// TestRESTSeamDiscoveryAndExpiredWatch: discovery is aggregated
// (apidiscovery.k8s.io/v2) when the client asks for it, as client-go's
// discovery client does, with the subresources the engine serves; a watch
// of a CRD kind from a resourceVersion older than the kind's serving is
// answered as kube-apiserver's watch cache answers it: one ERROR event,
// 410 Expired, then the end of the stream.
func TestRESTSeamDiscoveryAndExpiredWatch(t *testing.T) {
	f := newFixture(t, ctrlsim.ManagerOptions{})
	ctx := t.Context()
	cs, err := kubernetes.NewForConfig(f.mgr.GetConfig())
	must(t, err)
	cm, err := cs.CoreV1().ConfigMaps("default").Create(ctx, configMap("before", nil), metav1.CreateOptions{})
	must(t, err)
	_, err = cs.CoreV1().ConfigMaps("default").Create(ctx, configMap("just-before", nil), metav1.CreateOptions{})
	must(t, err)
	must(t, f.srv.InstallCRDJSON([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
		"metadata":{"name":"gizmos.example.io"},"spec":{"group":"example.io","scope":"Namespaced",
		"names":{"plural":"gizmos","singular":"gizmo","kind":"Gizmo","listKind":"GizmoList"},
		"versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
		"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`)))

	// The raw aggregated document, with the content type client-go checks.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://ctrlsim.invalid/apis", nil)
	must(t, err)
	req.Header.Set("Accept", discovery.AcceptV2+","+discovery.AcceptV1)
	resp, err := f.mgr.GetHTTPClient().Do(req)
	must(t, err)
	defer func() { _ = resp.Body.Close() }()
	if ct := resp.Header.Get("Content-Type"); ct != discovery.AcceptV2 {
		t.Fatalf("content type %q, want %q", ct, discovery.AcceptV2)
	}
	var agg apidiscoveryv2.APIGroupDiscoveryList
	must(t, json.NewDecoder(resp.Body).Decode(&agg))
	subs := map[string][]string{}
	for _, g := range agg.Items {
		for _, v := range g.Versions {
			for _, r := range v.Resources {
				for _, s := range r.Subresources {
					subs[g.Name+"/"+r.Resource] = append(subs[g.Name+"/"+r.Resource], s.Subresource)
				}
			}
		}
	}
	if got := strings.Join(subs["apps/deployments"], ","); got != "scale,status" {
		t.Errorf("apps/deployments subresources %q, want scale,status", got)
	}
	if got := strings.Join(subs["example.io/gizmos"], ","); got != "status" {
		t.Errorf("example.io/gizmos subresources %q, want status", got)
	}

	// client-go's discovery client reads the aggregated form.
	dc, err := discovery.NewDiscoveryClientForConfig(f.mgr.GetConfig())
	must(t, err)
	_, lists, err := dc.ServerGroupsAndResources()
	must(t, err)
	found := map[string]bool{}
	for _, l := range lists {
		for _, r := range l.APIResources {
			found[l.GroupVersion+" "+r.Name] = true
		}
	}
	for _, want := range []string{"v1 configmaps", "v1 pods/eviction", "apps/v1 deployments/scale", "example.io/v1 gizmos", "example.io/v1 gizmos/status"} {
		if !found[want] {
			t.Errorf("discovery lacks %s", want)
		}
	}

	dyn, err := dynamic.NewForConfig(f.mgr.GetConfig())
	must(t, err)
	gizmos := dyn.Resource(schema.GroupVersionResource{Group: "example.io", Version: "v1", Resource: "gizmos"}).Namespace("default")
	w, err := gizmos.Watch(ctx, metav1.ListOptions{ResourceVersion: cm.ResourceVersion})
	must(t, err)
	ev, ok := <-w.ResultChan()
	if !ok || ev.Type != "ERROR" {
		t.Fatalf("first event %v %v, want ERROR", ev.Type, ok)
	}
	if err := apierrors.FromObject(ev.Object); !apierrors.IsResourceExpired(err) || !strings.Contains(err.Error(), "too old resource version") {
		t.Errorf("watch error %v, want 410 Expired: too old resource version", err)
	}
	if _, ok := <-w.ResultChan(); ok {
		t.Error("the stream went on after the ERROR event")
	}
	// From the revision the kind was served at on, it watches.
	l, err := gizmos.List(ctx, metav1.ListOptions{})
	must(t, err)
	w2, err := gizmos.Watch(ctx, metav1.ListOptions{ResourceVersion: l.GetResourceVersion()})
	must(t, err)
	w2.Stop()
}

// TestRESTSeamDeleteOptions: a DELETE's options reach the server through the
// seam from both kinds of client built on the manager's rest.Config (a
// client-go clientset sends them in the body; a controller-runtime client of
// upstream's own too). controller-runtime's AsDeleteOptions once overwrote
// them with empty fields: a Foreground delete removed the object at once, a
// wrong precondition deleted, a dry run deleted.
func TestRESTSeamDeleteOptions(t *testing.T) {
	wrongUID := types.UID("00000000-0000-0000-0000-000000000000")
	stale := "1"
	bogus := metav1.DeletionPropagation("Sideways")
	cases := []struct {
		name string
		opts func(cm *corev1.ConfigMap) metav1.DeleteOptions
		// want: "held <finalizer>" (deletionTimestamp set, finalizer added),
		// "kept" (untouched), "gone", or an error reason.
		want string
	}{
		{"foreground", func(*corev1.ConfigMap) metav1.DeleteOptions {
			return metav1.DeleteOptions{PropagationPolicy: ptrTo(metav1.DeletePropagationForeground)}
		}, "held " + metav1.FinalizerDeleteDependents},
		{"orphan", func(*corev1.ConfigMap) metav1.DeleteOptions {
			return metav1.DeleteOptions{PropagationPolicy: ptrTo(metav1.DeletePropagationOrphan)}
		}, "held " + metav1.FinalizerOrphanDependents},
		{"background", func(*corev1.ConfigMap) metav1.DeleteOptions {
			return metav1.DeleteOptions{PropagationPolicy: ptrTo(metav1.DeletePropagationBackground)}
		}, "gone"},
		{"precondition-uid", func(*corev1.ConfigMap) metav1.DeleteOptions {
			return metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrongUID}}
		}, string(metav1.StatusReasonConflict)},
		{"precondition-rv", func(*corev1.ConfigMap) metav1.DeleteOptions {
			return metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &stale}}
		}, string(metav1.StatusReasonConflict)},
		{"precondition-fresh", func(cm *corev1.ConfigMap) metav1.DeleteOptions {
			return metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cm.UID, ResourceVersion: &cm.ResourceVersion}}
		}, "gone"},
		{"dry-run", func(*corev1.ConfigMap) metav1.DeleteOptions {
			return metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}
		}, "kept"},
		{"dry-run-foreground", func(*corev1.ConfigMap) metav1.DeleteOptions {
			return metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}, PropagationPolicy: ptrTo(metav1.DeletePropagationForeground)}
		}, "kept"},
		{"invalid-policy", func(*corev1.ConfigMap) metav1.DeleteOptions {
			return metav1.DeleteOptions{PropagationPolicy: &bogus}
		}, string(metav1.StatusReasonInvalid)},
		{"invalid-dry-run", func(*corev1.ConfigMap) metav1.DeleteOptions {
			return metav1.DeleteOptions{DryRun: []string{"Some"}}
		}, string(metav1.StatusReasonInvalid)},
	}
	clients := map[string]func(t *testing.T, f *fixture) func(ctx context.Context, cm *corev1.ConfigMap, o metav1.DeleteOptions) error{
		"clientset": func(t *testing.T, f *fixture) func(ctx context.Context, cm *corev1.ConfigMap, o metav1.DeleteOptions) error {
			cs, err := kubernetes.NewForConfig(f.mgr.GetConfig())
			must(t, err)
			return func(ctx context.Context, cm *corev1.ConfigMap, o metav1.DeleteOptions) error {
				return cs.CoreV1().ConfigMaps(cm.Namespace).Delete(ctx, cm.Name, o)
			}
		},
		"controller-runtime": func(t *testing.T, f *fixture) func(ctx context.Context, cm *corev1.ConfigMap, o metav1.DeleteOptions) error {
			c, err := client.New(f.mgr.GetConfig(), client.Options{Scheme: f.env.Scheme})
			must(t, err)
			return func(ctx context.Context, cm *corev1.ConfigMap, o metav1.DeleteOptions) error {
				return c.Delete(ctx, cm, &client.DeleteOptions{Raw: &o, PropagationPolicy: o.PropagationPolicy,
					Preconditions: o.Preconditions, DryRun: o.DryRun, GracePeriodSeconds: o.GracePeriodSeconds})
			}
		},
	}
	for cname, mk := range clients {
		for _, tc := range cases {
			t.Run(cname+"/"+tc.name, func(t *testing.T) {
				f := newFixture(t, ctrlsim.ManagerOptions{})
				ctx := t.Context()
				del := mk(t, f)
				cm := configMap("a", map[string]string{"k": "v"})
				cm.Finalizers = nil
				must(t, f.direct.Create(ctx, cm))
				err := del(ctx, cm, tc.opts(cm))
				got := &corev1.ConfigMap{}
				gerr := f.direct.Get(ctx, client.ObjectKeyFromObject(cm), got)
				var outcome string
				switch {
				case err != nil:
					outcome = string(apierrors.ReasonForError(err))
					if gerr != nil || got.DeletionTimestamp != nil {
						outcome += " (and the object was deleted)"
					}
				case apierrors.IsNotFound(gerr):
					outcome = "gone"
				case gerr != nil:
					t.Fatal(gerr)
				case got.DeletionTimestamp != nil:
					outcome = "held " + strings.Join(got.Finalizers, ",")
				case got.ResourceVersion == cm.ResourceVersion:
					outcome = "kept"
				default:
					outcome = "changed: " + got.ResourceVersion
				}
				if outcome != tc.want {
					t.Errorf("delete %s: %s (err %v), want %s", tc.name, outcome, err, tc.want)
				}
			})
		}
	}
}

// TestRESTSeamDeleteCollectionOptions: a DELETE on a collection keeps its
// options too (a dry run deletes nothing, a Foreground policy holds each).
func TestRESTSeamDeleteCollectionOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts metav1.DeleteOptions
		want string
	}{
		{"dry-run", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}, "kept kept"},
		{"foreground", metav1.DeleteOptions{PropagationPolicy: ptrTo(metav1.DeletePropagationForeground)}, "held held"},
		{"background", metav1.DeleteOptions{}, "gone gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, ctrlsim.ManagerOptions{})
			ctx := t.Context()
			cs, err := kubernetes.NewForConfig(f.mgr.GetConfig())
			must(t, err)
			for _, n := range []string{"a", "b"} {
				must(t, f.direct.Create(ctx, configMap(n, nil)))
			}
			must(t, cs.CoreV1().ConfigMaps("default").DeleteCollection(ctx, tc.opts, metav1.ListOptions{}))
			var out []string
			for _, n := range []string{"a", "b"} {
				got := &corev1.ConfigMap{}
				switch err := f.direct.Get(ctx, client.ObjectKey{Namespace: "default", Name: n}, got); {
				case apierrors.IsNotFound(err):
					out = append(out, "gone")
				case err != nil:
					t.Fatal(err)
				case got.DeletionTimestamp != nil:
					out = append(out, "held")
				default:
					out = append(out, "kept")
				}
			}
			if s := strings.Join(out, " "); s != tc.want {
				t.Errorf("deletecollection %s: %s, want %s", tc.name, s, tc.want)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestRESTSeamListParameters: a list's limit, continue, resourceVersion and
// resourceVersionMatch reach the server through the seam (they were dropped:
// a paged list came back whole, a list at a future resourceVersion
// succeeded), decoded and validated as kube-apiserver's list handler does.
func TestRESTSeamListParameters(t *testing.T) {
	f := newFixture(t, ctrlsim.ManagerOptions{})
	ctx := t.Context()
	cs, err := kubernetes.NewForConfig(f.mgr.GetConfig())
	must(t, err)
	for _, n := range []string{"a", "b", "c"} {
		must(t, f.direct.Create(ctx, configMap(n, nil)))
	}
	cms := cs.CoreV1().ConfigMaps("default")
	page, err := cms.List(ctx, metav1.ListOptions{Limit: 2})
	must(t, err)
	if len(page.Items) != 2 || page.Continue == "" || page.RemainingItemCount == nil || *page.RemainingItemCount != 1 {
		t.Fatalf("first page: %d items, continue %q, remaining %v; want 2, a token, 1", len(page.Items), page.Continue, page.RemainingItemCount)
	}
	rest, err := cms.List(ctx, metav1.ListOptions{Limit: 2, Continue: page.Continue})
	must(t, err)
	if len(rest.Items) != 1 || rest.Items[0].Name != "c" || rest.Continue != "" {
		t.Errorf("second page: %d items, continue %q; want c alone, no token", len(rest.Items), rest.Continue)
	}
	for _, tc := range []struct {
		name string
		opts metav1.ListOptions
		want metav1.StatusReason
	}{
		{"future-rv", metav1.ListOptions{ResourceVersion: "999999"}, metav1.StatusReasonTimeout},
		{"match-without-rv", metav1.ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchExact}, metav1.StatusReasonInvalid},
		{"exact-rv-0", metav1.ListOptions{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchExact}, metav1.StatusReasonInvalid},
		{"bad-continue", metav1.ListOptions{Continue: "not-a-token"}, metav1.StatusReasonBadRequest},
		{"bad-label-selector", metav1.ListOptions{LabelSelector: "a in (b"}, metav1.StatusReasonBadRequest},
	} {
		_, err := cms.List(ctx, tc.opts)
		if got := apierrors.ReasonForError(err); got != tc.want {
			t.Errorf("list %s: %v (%s), want %s", tc.name, err, got, tc.want)
		}
	}
	// A list at an exact past resourceVersion sees the past.
	past := page.ResourceVersion
	must(t, f.direct.Create(ctx, configMap("d", nil)))
	old, err := cms.List(ctx, metav1.ListOptions{ResourceVersion: past, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	must(t, err)
	if len(old.Items) != 3 {
		t.Errorf("list at exact %s: %d items, want 3", past, len(old.Items))
	}
}

// TestRESTSeamDryRun: dryRun on create, update and patch reaches the server
// through the seam (it was dropped: a dry-run write was stored), and an
// invalid dryRun value is a 422 as from the handlers.
func TestRESTSeamDryRun(t *testing.T) {
	f := newFixture(t, ctrlsim.ManagerOptions{})
	ctx := t.Context()
	cs, err := kubernetes.NewForConfig(f.mgr.GetConfig())
	must(t, err)
	cms := cs.CoreV1().ConfigMaps("default")
	dry := []string{metav1.DryRunAll}
	if _, err := cms.Create(ctx, configMap("a", map[string]string{"k": "v"}), metav1.CreateOptions{DryRun: dry}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after a dry-run create: %v, want NotFound", err)
	}
	created, err := cms.Create(ctx, configMap("a", map[string]string{"k": "v"}), metav1.CreateOptions{})
	must(t, err)
	upd := created.DeepCopy()
	upd.Data["k"] = "dry"
	out, err := cms.Update(ctx, upd, metav1.UpdateOptions{DryRun: dry})
	must(t, err)
	if out.Data["k"] != "dry" {
		t.Errorf("dry-run update answered %v, want the updated object", out.Data)
	}
	if _, err := cms.Patch(ctx, "a", types.MergePatchType, []byte(`{"data":{"k":"dry"}}`), metav1.PatchOptions{DryRun: dry}); err != nil {
		t.Fatal(err)
	}
	got, err := cms.Get(ctx, "a", metav1.GetOptions{})
	must(t, err)
	if got.Data["k"] != "v" || got.ResourceVersion != created.ResourceVersion {
		t.Errorf("after dry-run update and patch: data %v rv %s, want unchanged (rv %s)", got.Data, got.ResourceVersion, created.ResourceVersion)
	}
	for name, err := range map[string]error{
		"create": func() error {
			_, err := cms.Create(ctx, configMap("b", nil), metav1.CreateOptions{DryRun: []string{"Some"}})
			return err
		}(),
		"update": func() error {
			_, err := cms.Update(ctx, got, metav1.UpdateOptions{DryRun: []string{"Some"}})
			return err
		}(),
		"patch": func() error {
			_, err := cms.Patch(ctx, "a", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{DryRun: []string{"Some"}})
			return err
		}(),
		"apply-without-manager": func() error {
			_, err := cms.Patch(ctx, "a", types.ApplyPatchType, []byte(`{"apiVersion":"v1","kind":"ConfigMap"}`), metav1.PatchOptions{})
			return err
		}(),
	} {
		if !apierrors.IsInvalid(err) {
			t.Errorf("%s with invalid options: %v, want Invalid", name, err)
		}
	}
}
