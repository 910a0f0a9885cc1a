package ctrlsim_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
	"github.com/ctrlbugs/corpus/engine/enginetest"
)

// wired starts f's manager's cache if it is controller-runtime's (as its
// manager starts it, on a goroutine of its own) and returns the function
// that moves the views of kinds to what the hooks allow and lets every
// event through, one frame at a time, waiting after each as the explorer
// does. Call it inside a synctest bubble.
func wired(t *testing.T, f *fixture, mgrs ...*ctrlsim.Manager) func(kinds ...schema.GroupKind) {
	t.Helper()
	if len(mgrs) == 0 {
		mgrs = []*ctrlsim.Manager{f.mgr}
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		synctest.Wait()
	})
	for _, m := range mgrs {
		for _, r := range m.Other() {
			if r == m.Cache() {
				go func() { _ = m.Cache().Start(ctx) }()
			}
		}
	}
	synctest.Wait()
	return func(kinds ...schema.GroupKind) {
		t.Helper()
		// Streams opened since the last call (reflectors watch from
		// goroutines of their own) are there once all block.
		synctest.Wait()
		for _, m := range mgrs {
			for _, gk := range kinds {
				f.env.Lock()
				_, err := m.Cache().Sync(gk)
				f.env.Unlock()
				must(t, err)
			}
			for m.Cache().ReleaseNext() {
				synctest.Wait()
			}
			synctest.Wait()
		}
	}
}

// bounded is a context for a test's reads that ends after a virtual
// minute: a read waiting for an informer to sync on frames nobody
// releases fails instead of hanging the test.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// inBubble runs fn in a synctest bubble with pinned randomness (client-go
// jitters its backoffs with math/rand).
func inBubble(t *testing.T, fn func(t *testing.T)) {
	enginetest.Bubble(t, 1, fn)
}

// TestIndexedListUnstructured: on controller-runtime's cache, a field
// index registered with an unstructured object of a custom resource not
// in the scheme serves a cached List in that form; a typed index does not
// serve a metadata List.
func TestIndexedListUnstructured(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		f := newFixture(t, ctrlsim.ManagerOptions{UpstreamCache: &cache.Options{}})
		ctx := bounded(t)
		crds, err := apiserver.ReadCRDs([]byte(gizmoCRD(8)))
		must(t, err)
		must(t, f.srv.InstallCRD(crds[0]))
		gvk := schema.GroupVersionKind{Group: "test.ctrlbugs.dev", Version: "v1", Kind: "Gizmo"}
		if f.mgr.GetScheme().Recognizes(gvk) {
			t.Fatal("Gizmo is in the scheme: the test needs a kind that is not")
		}
		for _, g := range []struct{ name, owner string }{{"a", "x"}, {"b", "y"}, {"c", "x"}} {
			must(t, f.direct.Create(ctx, gizmo(g.name, map[string]any{"mode": "fast", "name": g.owner})))
		}
		probe := &unstructured.Unstructured{}
		probe.SetGroupVersionKind(gvk)
		must(t, f.mgr.GetFieldIndexer().IndexField(ctx, probe, "spec.name", func(o client.Object) []string {
			u, ok := o.(*unstructured.Unstructured)
			if !ok {
				panic(fmt.Sprintf("the extractor got %T, want *unstructured.Unstructured", o))
			}
			if v, _, _ := unstructured.NestedString(u.Object, "spec", "name"); v != "" {
				return []string{v}
			}
			return nil
		}))
		// Indexes are registered before the cache starts, as upstream's
		// setup does (controller-runtime refuses them on a started
		// informer).
		deliver := wired(t, f)
		deliver(gvk.GroupKind())
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind("GizmoList"))
		if err := f.mgr.GetCache().List(ctx, l, client.InNamespace("default"), client.MatchingFields{"spec.name": "x"}); err != nil {
			t.Fatalf("indexed unstructured list: %v", err)
		}
		var got []string
		for _, it := range l.Items {
			got = append(got, it.GetName())
		}
		slices.Sort(got)
		if fmt.Sprint(got) != "[a c]" {
			t.Errorf("indexed list %v, want [a c]", got)
		}
		if op := f.hooks.last(t); op.Verb.String() != "list" || !op.Cached || op.Items != 2 || op.ViewRev != f.srv.Store().Rev() {
			t.Errorf("recorded %+v, want a cached list of 2 items at rev %d", op, f.srv.Store().Rev())
		}

		must(t, f.mgr.GetFieldIndexer().IndexField(ctx, &corev1.ConfigMap{}, "owner", func(o client.Object) []string {
			return []string{o.GetLabels()["owner"]}
		}))
		pm := &metav1.PartialObjectMetadata{}
		pm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
		_, err = f.mgr.GetCache().GetInformer(ctx, pm, cache.BlockUntilSynced(false))
		must(t, err)
		deliver(cmGK)
		ml := &metav1.PartialObjectMetadataList{}
		ml.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
		err = f.mgr.GetCache().List(ctx, ml, client.MatchingFields{"owner": "x"})
		if err == nil || !strings.Contains(err.Error(), "Index with name field:owner does not exist") {
			t.Errorf("metadata list on a typed index: %v, want controller-runtime's missing-index error", err)
		}
	})
}

// TestListKeyOrder: a List read from controller-runtime's cache
// comes in key order, every time, in every form. Its indexer is a Go map:
// unsorted, two reads of 40 objects in the same order are a 1-in-40!
// coincidence, so the test fails on an unsorted cache.
func TestListKeyOrder(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		f := newFixture(t, ctrlsim.ManagerOptions{UpstreamCache: &cache.Options{}})
		ctx := bounded(t)
		var want []string
		for i := range 40 {
			name := fmt.Sprintf("cm-%02d", (i*17)%40) // created out of key order
			must(t, f.direct.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}))
			want = append(want, "default/"+name)
		}
		slices.Sort(want)
		deliver := wired(t, f)
		pm := &metav1.PartialObjectMetadata{}
		pm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
		for _, o := range []client.Object{&corev1.ConfigMap{}, u, pm} {
			_, err := f.mgr.GetCache().GetInformer(ctx, o, cache.BlockUntilSynced(false))
			must(t, err)
		}
		deliver(cmGK)
		for _, form := range []struct {
			name string
			list client.ObjectList
		}{
			{"typed", &corev1.ConfigMapList{}},
			{"unstructured", func() client.ObjectList {
				l := &unstructured.UnstructuredList{}
				l.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
				return l
			}()},
			{"metadata", func() client.ObjectList {
				l := &metav1.PartialObjectMetadataList{}
				l.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
				return l
			}()},
		} {
			for range 2 {
				must(t, f.mgr.GetCache().List(ctx, form.list))
				items, err := meta.ExtractList(form.list)
				must(t, err)
				var got []string
				for _, o := range items {
					a, err := meta.Accessor(o)
					must(t, err)
					got = append(got, a.GetNamespace()+"/"+a.GetName())
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s list in order %v, want key order", form.name, got)
				}
			}
		}
	})
}

// TestCacheOptionsHonoured: the cache options upstream's main passes
// shape what the cache holds: a ByObject label selector and
// DefaultNamespaces limit what is listed and watched, and a
// DefaultTransform is what cached Get and List return; with
// controller-runtime's defaults the cache holds everything, untransformed.
func TestCacheOptionsHonoured(t *testing.T) {
	opts := &cache.Options{
		DefaultNamespaces: map[string]cache.Config{"a": {}},
		ByObject: map[client.Object]cache.ByObject{
			&corev1.ConfigMap{}: {Label: labels.SelectorFromSet(labels.Set{"app": "x"})},
		},
		DefaultTransform: func(o any) (any, error) {
			if co, ok := o.(client.Object); ok {
				co.SetManagedFields(nil)
				co.SetAnnotations(map[string]string{"transformed": "yes"})
			}
			return o, nil
		},
	}
	for _, tc := range []struct {
		name      string
		opts      *cache.Options
		list      string // cached List, all namespaces
		getOther  string // cached Get of b/x: the error, or "found"
		annotated string // the transform's annotation on a cached Get
	}{
		{"options as upstream passes them", opts, "[a/one]", "unable to get: b/x because of unknown namespace for the cache", "yes"},
		{"controller-runtime's defaults", nil, "[a/one a/two b/x]", "found", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inBubble(t, func(t *testing.T) {
				f := newFixture(t, ctrlsim.ManagerOptions{UpstreamCache: tc.opts})
				ctx := bounded(t)
				for _, ns := range []string{"a", "b"} {
					must(t, f.direct.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
				}
				for _, cm := range []struct{ ns, name, app string }{{"a", "one", "x"}, {"a", "two", "y"}, {"b", "x", "x"}} {
					must(t, f.direct.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cm.ns, Name: cm.name, Labels: map[string]string{"app": cm.app}}}))
				}
				deliver := wired(t, f)
				_, err := f.mgr.GetCache().GetInformer(ctx, &corev1.ConfigMap{}, cache.BlockUntilSynced(false))
				must(t, err)
				deliver(cmGK)
				l := &corev1.ConfigMapList{}
				must(t, f.mgr.GetClient().List(ctx, l))
				var got []string
				for _, it := range l.Items {
					got = append(got, it.Namespace+"/"+it.Name)
				}
				slices.Sort(got)
				if fmt.Sprint(got) != tc.list {
					t.Errorf("cached list %v, want %s", got, tc.list)
				}
				err = f.mgr.GetClient().Get(ctx, client.ObjectKey{Namespace: "b", Name: "x"}, &corev1.ConfigMap{})
				gotErr := "found"
				if err != nil {
					gotErr = err.Error()
				}
				if gotErr != tc.getOther {
					t.Errorf("cached get of b/x: %s, want %s", gotErr, tc.getOther)
				}
				one := &corev1.ConfigMap{}
				must(t, f.mgr.GetClient().Get(ctx, client.ObjectKey{Namespace: "a", Name: "one"}, one))
				if one.Annotations["transformed"] != tc.annotated {
					t.Errorf("cached get annotations %v, want transformed=%q", one.Annotations, tc.annotated)
				}
				if tc.annotated != "" && len(one.ManagedFields) > 0 {
					t.Errorf("cached get kept managedFields the transform removed")
				}
			})
		})
	}
}

// TestWatchBreakRelist: controller-runtime's informer, its watch broken
// with 410 Expired while its view was held, lists again itself (client-go's
// reflector, a watch-list on this server) and its queue (client-go's
// RealFIFO, InOrderInformers) replaces the store: first a
// DeletedFinalStateUnknown tombstone with the last state it had for each
// object deleted meanwhile, then the list: one update per changed object
// (v 1->3), an add for a new one, and an update of itself for an object
// unchanged (each group in Go map order: see listed). A Replaced delta
// with the same resourceVersion is a sync, which shared-informer
// listeners hear until their first resync check (they start "syncing"; the check comes once per resync period,
// 10 h by default). A watch that resumes delivers every event instead.
func TestWatchBreakRelist(t *testing.T) {
	for _, tc := range []struct {
		name   string
		relist bool
		want   string
	}{
		{"watch resumes", false, "update a v=1->2, update a v=2->3, delete b, add d v=1"},
		{"watch expired: relist", true, "delete default/b (DeletedFinalStateUnknown, last v=1), add d v=1, update a v=1->3, update c v=1->1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inBubble(t, func(t *testing.T) {
				f := newFixture(t, ctrlsim.ManagerOptions{})
				ctx := bounded(t)
				for _, n := range []string{"a", "b", "c"} {
					must(t, f.direct.Create(ctx, configMap(n, map[string]string{"v": "1"})))
				}
				h := &relistHooks{recHooks: &recHooks{}, relist: tc.relist}
				mgr, err := ctrlsim.NewManager(f.env, "ctl", h, ctrlsim.ManagerOptions{UpstreamCache: &cache.Options{}})
				must(t, err)
				broke := f.srv.Store().Rev()
				h.rev = broke // the watch broke here: nothing after reaches the view
				deliver := wired(t, f, mgr)
				inf, err := mgr.GetCache().GetInformer(ctx, &corev1.ConfigMap{}, cache.BlockUntilSynced(false))
				must(t, err)
				rec := &told{}
				_, err = inf.AddEventHandler(rec)
				must(t, err)
				deliver(cmGK)
				if got := strings.Join(listed(rec.lines), ", "); got != "add a v=1, add b v=1, add c v=1" {
					t.Fatalf("initial list %q", got)
				}
				rec.lines = nil

				a := configMap("a", map[string]string{"v": "2"})
				must(t, f.direct.Update(ctx, a))
				a.Data["v"] = "3"
				must(t, f.direct.Update(ctx, a))
				must(t, f.direct.Delete(ctx, configMap("b", nil)))
				must(t, f.direct.Create(ctx, configMap("d", map[string]string{"v": "1"})))

				h.rev = 0 // the window closes
				deliver(cmGK)
				// The reflector backs off before it lists again.
				time.Sleep(5 * time.Second)
				synctest.Wait()
				deliver(cmGK)
				lines := rec.lines
				if tc.relist {
					lines = listed(lines)
				}
				if got := strings.Join(lines, ", "); got != tc.want {
					t.Errorf("handler heard %q\nwant              %q", got, tc.want)
				}
				if tc.relist && (len(h.asked) == 0 || h.asked[len(h.asked)-1] != [2]int64{broke, f.srv.Store().Rev()}) {
					t.Errorf("Relisting asked %v, want the last ask from %d to %d", h.asked, broke, f.srv.Store().Rev())
				}
				got := &corev1.ConfigMap{}
				must(t, mgr.GetCache().Get(ctx, client.ObjectKey{Namespace: "default", Name: "a"}, got))
				if got.Data["v"] != "3" {
					t.Errorf("cached a v=%s after the catch-up, want 3", got.Data["v"])
				}
			})
		})
	}
}

// listed puts what a handler heard from a list (a watch-list's initial
// events, a relist) in a fixed order: the tombstones, then the rest, each
// sorted. client-go's reflector gathers a watch-list in a temporary store
// and replaces the informer's queue with its List(), and RealFIFO.Replace
// takes the deleted keys from its indexer: both in Go map order, so a
// handler hears a list's objects in an order that differs from run to
// run, in production as here (the explorer's queues order what a
// delivery enqueued; the handlers' own order is client-go's).
func listed(lines []string) []string {
	var dead, rest []string
	for _, l := range lines {
		if strings.Contains(l, "DeletedFinalStateUnknown") {
			dead = append(dead, l)
		} else {
			rest = append(rest, l)
		}
	}
	slices.Sort(dead)
	slices.Sort(rest)
	if len(dead)+len(rest) > 0 && len(dead) > 0 && !strings.Contains(lines[0], "DeletedFinalStateUnknown") {
		// Keep the order client-go guarantees visible: tombstones first.
		return append([]string{"(tombstones not first)"}, lines...)
	}
	return append(dead, rest...)
}

// TestPerStreamDelay: two processes watch the same kind; one's stream is
// held back (its view lags), the other's is current. Each cache shows
// what its own stream delivered, and the held one catches up, event by
// event, once its window closes.
func TestPerStreamDelay(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		f := newFixture(t, ctrlsim.ManagerOptions{})
		ctx := bounded(t)
		must(t, f.direct.Create(ctx, configMap("a", map[string]string{"v": "1"})))
		held := &recHooks{}
		lagging, err := ctrlsim.NewManager(f.env, "lagging", held, ctrlsim.ManagerOptions{UpstreamCache: &cache.Options{}})
		must(t, err)
		current, err := ctrlsim.NewManager(f.env, "current", &recHooks{}, ctrlsim.ManagerOptions{UpstreamCache: &cache.Options{}})
		must(t, err)
		// Held from the start (before any reflector reads the hooks, which
		// it does from goroutines of its own under the Env lock).
		held.rev = f.srv.Store().Rev()
		deliver := wired(t, f, lagging, current)
		var heard [2]*told
		for i, m := range []*ctrlsim.Manager{lagging, current} {
			inf, err := m.GetCache().GetInformer(ctx, &corev1.ConfigMap{}, cache.BlockUntilSynced(false))
			must(t, err)
			heard[i] = &told{}
			_, err = inf.AddEventHandler(heard[i])
			must(t, err)
		}
		deliver(cmGK)
		a := configMap("a", map[string]string{"v": "2"})
		must(t, f.direct.Update(ctx, a))
		a.Data["v"] = "3"
		must(t, f.direct.Update(ctx, a))
		deliver(cmGK)
		read := func(m *ctrlsim.Manager) string {
			got := &corev1.ConfigMap{}
			must(t, m.GetClient().Get(ctx, client.ObjectKey{Namespace: "default", Name: "a"}, got))
			return got.Data["v"]
		}
		if l, c := read(lagging), read(current); l != "1" || c != "3" {
			t.Errorf("held window: lagging reads v=%s, current v=%s; want 1 and 3", l, c)
		}
		if op := held.last(t); !op.Cached || op.ViewRev != held.rev || op.ObservedRV == op.CurrentRV {
			t.Errorf("lagging read recorded %+v, want a cached read at rev %d behind the object's current version", op, held.rev)
		}
		f.env.Lock()
		held.rev = 0
		f.env.Unlock()
		deliver(cmGK)
		if l := read(lagging); l != "3" {
			t.Errorf("after the window lagging reads v=%s, want 3", l)
		}
		for i, want := range []string{"add a v=1, update a v=1->2, update a v=2->3", "add a v=1, update a v=1->2, update a v=2->3"} {
			if got := strings.Join(heard[i].lines, ", "); got != want {
				t.Errorf("handler %d heard %q, want %q", i, got, want)
			}
		}
	})
}

var _ toolscache.ResourceEventHandler = (*told)(nil)
