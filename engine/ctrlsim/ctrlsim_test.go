//go:debug randseednop=0

package ctrlsim_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
)

var cmGK = schema.GroupKind{Kind: "ConfigMap"}

// recHooks records every call and shows cached reads at a fixed revision
// (0: now), as a stale informer would.
type recHooks struct {
	rev     int64
	asked   []schema.GroupKind
	before  []ctrlsim.Op
	ops     []ctrlsim.Op
	events  []ctrlsim.Event
	refuse  error
	refused []ctrlsim.Op
}

func (h *recHooks) Visible(gk schema.GroupKind) int64 {
	h.asked = append(h.asked, gk)
	return h.rev
}

func (h *recHooks) BeforeCall(op *ctrlsim.Op) error {
	h.before = append(h.before, *op)
	if h.refuse != nil {
		h.refused = append(h.refused, *op)
		return h.refuse
	}
	return nil
}

func (h *recHooks) AfterCall(op *ctrlsim.Op) { h.ops = append(h.ops, *op) }

func (h *recHooks) Event(ev ctrlsim.Event) { h.events = append(h.events, ev) }

// last returns the last completed op.
func (h *recHooks) last(t *testing.T) ctrlsim.Op {
	t.Helper()
	if len(h.ops) == 0 {
		t.Fatal("no op recorded")
	}
	return h.ops[len(h.ops)-1]
}

type fixture struct {
	srv    *apiserver.Server
	env    *ctrlsim.Env
	direct client.Client // unrecorded, live
	mgr    *ctrlsim.Manager
	hooks  *recHooks
}

func newFixture(t testing.TB, opts ctrlsim.ManagerOptions) *fixture {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	srv, err := apiserver.New(apiserver.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	h := &recHooks{}
	env := ctrlsim.NewEnv(srv)
	mgr, err := ctrlsim.NewManager(env, "ctl", h, opts)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{srv: srv, env: env, direct: ctrlsim.NewDirectClient(srv, s), mgr: mgr, hooks: h}
}

// started starts the manager's cache (wired) and the informers of objs,
// and lets their first lists through, so that reads of them do not wait
// for frames nobody releases. It returns wired's deliver. Call it inside
// a synctest bubble.
func (f *fixture) started(t *testing.T, objs ...client.Object) func(kinds ...schema.GroupKind) {
	t.Helper()
	deliver := wired(t, f)
	var kinds []schema.GroupKind
	for _, o := range objs {
		_, err := f.mgr.GetCache().GetInformer(t.Context(), o, cache.BlockUntilSynced(false))
		must(t, err)
		gvk, err := apiutil.GVKForObject(o, f.mgr.GetScheme())
		must(t, err)
		kinds = append(kinds, gvk.GroupKind())
	}
	deliver(kinds...)
	return deliver
}

// startControllers runs StartControllers with newQueue while letting the
// sources' first lists through, as the explorer's warm-up does: each
// controller's Warmup waits for its informers to sync. Call it inside a
// synctest bubble, after wired.
func (f *fixture) startControllers(t *testing.T, deliver func(kinds ...schema.GroupKind), newQueue ctrlsim.QueueFactory) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f.mgr.StartControllers(t.Context(), newQueue) }()
	for {
		synctest.Wait()
		select {
		case err := <-done:
			must(t, err)
			return
		default:
		}
		deliver(f.mgr.Cache().Kinds()...)
		time.Sleep(100 * time.Millisecond)
	}
}

func configMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Data: data}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// history creates ConfigMap "a" with v=1, then updates it to v=2, and
// returns the store revisions of both writes.
func (f *fixture) history(t *testing.T) (rev1, rev2 int64) {
	t.Helper()
	ctx := t.Context()
	a := configMap("a", map[string]string{"v": "1"})
	must(t, f.direct.Create(ctx, a))
	rev1 = f.srv.Store().Rev()
	a.Data["v"] = "2"
	must(t, f.direct.Update(ctx, a))
	rev2 = f.srv.Store().Rev()
	if rev2 <= rev1 {
		t.Fatalf("update did not write: %d, %d", rev1, rev2)
	}
	return rev1, rev2
}

func rvString(rev int64) string { return strconv.FormatInt(rev, 10) }

func TestReads(t *testing.T) {
	key := client.ObjectKey{Namespace: "default", Name: "a"}
	cases := []struct {
		name string
		opts ctrlsim.ManagerOptions
		run  func(t *testing.T, f *fixture, rev1, rev2 int64)
	}{
		{"cached Get reads the view revision and records observed and current", ctrlsim.ManagerOptions{}, func(t *testing.T, f *fixture, rev1, rev2 int64) {
			f.hooks.rev = rev1
			f.started(t, &corev1.ConfigMap{})
			var cm corev1.ConfigMap
			must(t, f.mgr.GetClient().Get(t.Context(), key, &cm))
			if cm.Data["v"] != "1" || cm.ResourceVersion != rvString(rev1) {
				t.Fatalf("stale view read %v at rv %s", cm.Data, cm.ResourceVersion)
			}
			op := f.hooks.last(t)
			if op.Verb != "get" || !op.Cached || op.ViewRev != rev1 || op.ObservedRV != rvString(rev1) || op.CurrentRV != rvString(rev2) ||
				op.Controller != "ctl" || op.GVK.Kind != "ConfigMap" || op.Namespace != "default" || op.Name != "a" || op.Err != nil {
				t.Fatalf("op %+v", op)
			}
			// Asked where the informer's stream starts and how far the
			// read may catch up.
			if len(f.hooks.asked) == 0 || slices.ContainsFunc(f.hooks.asked, func(gk schema.GroupKind) bool { return gk != cmGK }) {
				t.Fatalf("Visible asked for %v", f.hooks.asked)
			}
		}},
		{"cached Get of an object created after the view is NotFound", ctrlsim.ManagerOptions{}, func(t *testing.T, f *fixture, rev1, rev2 int64) {
			f.hooks.rev = rev1 - 1
			f.started(t, &corev1.ConfigMap{})
			err := f.mgr.GetClient().Get(t.Context(), key, &corev1.ConfigMap{})
			if !apierrors.IsNotFound(err) {
				t.Fatalf("got %v", err)
			}
			if op := f.hooks.last(t); !op.Cached || op.CurrentRV != rvString(rev2) || op.ObservedRV != "" || !apierrors.IsNotFound(op.Err) {
				t.Fatalf("op %+v", op)
			}
		}},
		{"cached Get replaces the caller's object and sets TypeMeta", ctrlsim.ManagerOptions{}, func(t *testing.T, f *fixture, rev1, rev2 int64) {
			f.started(t, &corev1.ConfigMap{})
			cm := corev1.ConfigMap{BinaryData: map[string][]byte{"junk": nil}}
			cm.Labels = map[string]string{"junk": "x"}
			must(t, f.mgr.GetClient().Get(t.Context(), key, &cm))
			if cm.APIVersion != "v1" || cm.Kind != "ConfigMap" {
				t.Fatalf("TypeMeta %+v", cm.TypeMeta)
			}
			if cm.BinaryData != nil || cm.Labels != nil {
				t.Fatalf("caller's fields survived a cached read: %+v", cm)
			}
			if cm.Data["v"] != "2" {
				t.Fatalf("view 0 is not now: %v", cm.Data)
			}
		}},
		{"cached List items carry TypeMeta and the view's content", ctrlsim.ManagerOptions{}, func(t *testing.T, f *fixture, rev1, rev2 int64) {
			f.hooks.rev = rev1
			f.started(t, &corev1.ConfigMap{})
			var l corev1.ConfigMapList
			must(t, f.mgr.GetClient().List(t.Context(), &l, client.InNamespace("default")))
			if len(l.Items) != 1 || l.Items[0].Kind != "ConfigMap" || l.Items[0].Data["v"] != "1" {
				t.Fatalf("items %+v", l.Items)
			}
			if op := f.hooks.last(t); op.Verb != "list" || !op.Cached || op.ViewRev != rev1 || op.Items != 1 || op.Namespace != "default" {
				t.Fatalf("op %+v", op)
			}
		}},
		{"APIReader reads the present", ctrlsim.ManagerOptions{}, func(t *testing.T, f *fixture, rev1, rev2 int64) {
			f.hooks.rev = rev1
			var cm corev1.ConfigMap
			must(t, f.mgr.GetAPIReader().Get(t.Context(), key, &cm))
			if cm.Data["v"] != "2" {
				t.Fatalf("APIReader read %v", cm.Data)
			}
			var l corev1.ConfigMapList
			must(t, f.mgr.GetAPIReader().List(t.Context(), &l))
			if len(l.Items) != 1 || l.Items[0].Data["v"] != "2" {
				t.Fatalf("APIReader list %+v", l.Items)
			}
			for _, op := range f.hooks.ops {
				if op.Cached || op.ViewRev != 0 {
					t.Fatalf("live read recorded as cached: %+v", op)
				}
			}
			if len(f.hooks.asked) != 0 {
				t.Fatalf("APIReader asked for a view: %v", f.hooks.asked)
			}
		}},
		{"Uncached kinds bypass the cache", ctrlsim.ManagerOptions{Uncached: []client.Object{&corev1.ConfigMap{}}}, func(t *testing.T, f *fixture, rev1, rev2 int64) {
			f.hooks.rev = rev1
			var cm corev1.ConfigMap
			must(t, f.mgr.GetClient().Get(t.Context(), key, &cm))
			if cm.Data["v"] != "2" || f.hooks.last(t).Cached {
				t.Fatalf("uncached kind read %v (op %+v)", cm.Data, f.hooks.last(t))
			}
			// Other kinds are still cached.
			f.hooks.rev = 1
			f.started(t, &corev1.Secret{})
			err := f.mgr.GetClient().Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "s"}, &corev1.Secret{})
			if !apierrors.IsNotFound(err) || !f.hooks.last(t).Cached {
				t.Fatalf("secret: %v, op %+v", err, f.hooks.last(t))
			}
			if kinds := f.mgr.Cache().Kinds(); len(kinds) != 1 || kinds[0].Kind != "Secret" {
				t.Fatalf("watched kinds %v", kinds)
			}
		}},
		{"unstructured objects are live by default", ctrlsim.ManagerOptions{}, func(t *testing.T, f *fixture, rev1, rev2 int64) {
			f.hooks.rev = rev1
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("v1")
			u.SetKind("ConfigMap")
			must(t, f.mgr.GetClient().Get(t.Context(), key, u))
			if v, _, _ := unstructured.NestedString(u.Object, "data", "v"); v != "2" || f.hooks.last(t).Cached {
				t.Fatalf("unstructured read %v (op %+v)", u.Object["data"], f.hooks.last(t))
			}
			if kinds := f.mgr.Cache().Kinds(); len(kinds) != 0 {
				t.Fatalf("a live read started an informer: %v", kinds)
			}
		}},
		{"unstructured objects are cached when asked", ctrlsim.ManagerOptions{CacheUnstructured: true}, func(t *testing.T, f *fixture, rev1, rev2 int64) {
			f.hooks.rev = rev1
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("v1")
			u.SetKind("ConfigMap")
			f.started(t, u)
			must(t, f.mgr.GetClient().Get(t.Context(), key, u))
			if v, _, _ := unstructured.NestedString(u.Object, "data", "v"); v != "1" || !f.hooks.last(t).Cached {
				t.Fatalf("unstructured read %v (op %+v)", u.Object["data"], f.hooks.last(t))
			}
		}},
		// DisableFor and Unstructured are client options: a client built
		// over the cache (client.New with CacheOptions.Reader, as Crossplane
		// builds its ControllerEngine's) reads the cache itself, which
		// always serves from informers.
		{"reads through the cache itself are cached whatever the client options", ctrlsim.ManagerOptions{Uncached: []client.Object{&corev1.ConfigMap{}}}, func(t *testing.T, f *fixture, rev1, rev2 int64) {
			f.hooks.rev = rev1
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("v1")
			u.SetKind("ConfigMap")
			f.started(t, u, &corev1.ConfigMap{})
			must(t, f.mgr.GetCache().Get(t.Context(), key, u))
			if v, _, _ := unstructured.NestedString(u.Object, "data", "v"); v != "1" || !f.hooks.last(t).Cached || f.hooks.last(t).ViewRev != rev1 {
				t.Fatalf("unstructured read through the cache %v (op %+v)", u.Object["data"], f.hooks.last(t))
			}
			var l corev1.ConfigMapList
			must(t, f.mgr.GetCache().List(t.Context(), &l))
			if op := f.hooks.last(t); len(l.Items) != 1 || l.Items[0].Data["v"] != "1" || !op.Cached || op.Verb != "list" {
				t.Fatalf("typed list through the cache %+v (op %+v)", l.Items, op)
			}
			// The manager's client still reads the uncached kind live.
			var cm corev1.ConfigMap
			must(t, f.mgr.GetClient().Get(t.Context(), key, &cm))
			if cm.Data["v"] != "2" || f.hooks.last(t).Cached {
				t.Fatalf("client read of an uncached kind %v (op %+v)", cm.Data, f.hooks.last(t))
			}
		}},
		{"metadata-only cached Get", ctrlsim.ManagerOptions{}, func(t *testing.T, f *fixture, rev1, rev2 int64) {
			f.hooks.rev = rev1
			p := &metav1.PartialObjectMetadata{}
			p.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
			f.started(t, p)
			must(t, f.mgr.GetClient().Get(t.Context(), key, p))
			if p.ResourceVersion != rvString(rev1) || p.Kind != "ConfigMap" || !f.hooks.last(t).Cached {
				t.Fatalf("metadata read %+v", p)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inBubble(t, func(t *testing.T) {
				f := newFixture(t, tc.opts)
				rev1, rev2 := f.history(t)
				tc.run(t, f, rev1, rev2)
			})
		})
	}
}

// TestMatchingFields: a cached List by an index registered through
// IndexField, at a view held back and at the present.
func TestMatchingFields(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		f := newFixture(t, ctrlsim.ManagerOptions{})
		ctx := bounded(t)
		must(t, f.mgr.GetFieldIndexer().IndexField(ctx, &corev1.ConfigMap{}, "owner", func(o client.Object) []string {
			if v := o.GetLabels()["owner"]; v != "" {
				return []string{v}
			}
			return nil
		}))
		if err := f.mgr.GetFieldIndexer().IndexField(ctx, &corev1.ConfigMap{}, "owner", func(client.Object) []string { return nil }); err == nil {
			t.Fatalf("duplicate index accepted")
		}
		for _, c := range []struct{ name, ns, owner string }{
			{"a", "default", "x"}, {"b", "default", "y"}, {"c", "default", "x"}, {"d", "kube-system", "x"}, {"e", "default", ""},
		} {
			cm := configMap(c.name, nil)
			cm.Namespace = c.ns
			if c.owner != "" {
				cm.Labels = map[string]string{"owner": c.owner}
			}
			must(t, f.direct.Create(ctx, cm))
		}
		viewRev := f.srv.Store().Rev()
		// After the view: c moves from owner x to owner y.
		c := &corev1.ConfigMap{}
		must(t, f.direct.Get(ctx, client.ObjectKey{Namespace: "default", Name: "c"}, c))
		c.Labels["owner"] = "y"
		must(t, f.direct.Update(ctx, c))

		// The informer lists at the view, before c's move.
		f.hooks.rev = viewRev
		f.started(t, &corev1.ConfigMap{})
		list := func(rev int64, opts ...client.ListOption) ([]string, error) {
			f.hooks.rev = rev
			var l corev1.ConfigMapList
			if err := f.mgr.GetClient().List(ctx, &l, opts...); err != nil {
				return nil, err
			}
			var out []string
			for _, it := range l.Items {
				out = append(out, it.Namespace+"/"+it.Name)
			}
			return out, nil
		}
		cases := []struct {
			name string
			rev  int64
			opts []client.ListOption
			want string
		}{
			// First: a view never moves back.
			{"stale view uses the old index value", viewRev, []client.ListOption{client.InNamespace("default"), client.MatchingFields{"owner": "x"}}, "default/a default/c"},
			{"namespaced", 0, []client.ListOption{client.InNamespace("default"), client.MatchingFields{"owner": "x"}}, "default/a"},
			{"all namespaces", 0, []client.ListOption{client.MatchingFields{"owner": "x"}}, "default/a kube-system/d"},
			{"no match", 0, []client.ListOption{client.MatchingFields{"owner": "zz"}}, ""},
			{"with a label selector", 0, []client.ListOption{client.MatchingFields{"owner": "y"}, client.MatchingLabels{"owner": "y"}}, "default/b default/c"},
		}
		for _, tc := range cases {
			got, err := list(tc.rev, tc.opts...)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if s := strings.Join(got, " "); s != tc.want {
				t.Errorf("%s: got %q, want %q", tc.name, s, tc.want)
			}
		}
		_, err := list(0, client.MatchingFields{"spec.nope": "x"})
		if err == nil || !strings.Contains(err.Error(), "Index with name field:spec.nope does not exist") {
			t.Fatalf("non-indexed field: %v", err)
		}
		if op := f.hooks.last(t); op.Err == nil || !op.Cached {
			t.Fatalf("failed list op %+v", op)
		}
		// The API reader sends field selectors to the server, which knows only
		// metadata.name and metadata.namespace.
		var l corev1.ConfigMapList
		must(t, f.mgr.GetAPIReader().List(ctx, &l, client.MatchingFields{"metadata.name": "b"}))
		if len(l.Items) != 1 || l.Items[0].Name != "b" {
			t.Fatalf("live field selector: %+v", l.Items)
		}
		if err := f.mgr.GetAPIReader().List(ctx, &l, client.MatchingFields{"owner": "x"}); !apierrors.IsBadRequest(err) {
			t.Fatalf("live list by an index: %v", err)
		}
	})
}

func TestWrites(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, f *fixture)
	}{
		{"create decodes the response into the caller's object", func(t *testing.T, f *fixture) {
			cm := configMap("a", map[string]string{"v": "1"})
			must(t, f.mgr.GetClient().Create(t.Context(), cm))
			if cm.ResourceVersion == "" || cm.UID == "" || cm.CreationTimestamp.IsZero() || len(cm.ManagedFields) != 1 {
				t.Fatalf("response not decoded: %+v", cm.ObjectMeta)
			}
			if cm.ManagedFields[0].Manager != "ctl" {
				t.Errorf("field manager %q, want the controller's name", cm.ManagedFields[0].Manager)
			}
			op := f.hooks.last(t)
			if op.Verb != "create" || op.RVAfter != cm.ResourceVersion || op.Err != nil || !op.IsWrite() {
				t.Fatalf("op %+v", op)
			}
		}},
		{"update records the precondition and before/after", func(t *testing.T, f *fixture) {
			cm := configMap("a", map[string]string{"v": "1"})
			must(t, f.mgr.GetClient().Create(t.Context(), cm))
			pre := cm.ResourceVersion
			cm.Data["v"] = "2"
			must(t, f.mgr.GetClient().Update(t.Context(), cm))
			op := f.hooks.last(t)
			if cm.ResourceVersion == pre || op.Precondition != pre || op.RVBefore != pre || op.RVAfter != cm.ResourceVersion {
				t.Fatalf("op %+v (object rv %s)", op, cm.ResourceVersion)
			}
		}},
		{"stale update is a Conflict, recorded", func(t *testing.T, f *fixture) {
			cm := configMap("a", map[string]string{"v": "1"})
			must(t, f.mgr.GetClient().Create(t.Context(), cm))
			stale := cm.DeepCopy()
			cm.Data["v"] = "2"
			must(t, f.mgr.GetClient().Update(t.Context(), cm))
			stale.Data["v"] = "3"
			if err := f.mgr.GetClient().Update(t.Context(), stale); !apierrors.IsConflict(err) {
				t.Fatalf("got %v", err)
			}
			if op := f.hooks.last(t); !apierrors.IsConflict(op.Err) || op.RVAfter != "" {
				t.Fatalf("op %+v", op)
			}
		}},
		{"merge patch decodes into the caller's object", func(t *testing.T, f *fixture) {
			cm := configMap("a", map[string]string{"v": "1"})
			must(t, f.direct.Create(t.Context(), cm))
			base := cm.DeepCopy()
			cm.Data["w"] = "x"
			must(t, f.mgr.GetClient().Patch(t.Context(), cm, client.MergeFrom(base)))
			if cm.ResourceVersion == base.ResourceVersion || cm.Data["w"] != "x" {
				t.Fatalf("patched object %+v", cm)
			}
			if op := f.hooks.last(t); op.Verb != "patch" || op.PatchType != "application/merge-patch+json" || op.Precondition != "" {
				t.Fatalf("op %+v", op)
			}
			base = cm.DeepCopy()
			cm.Data["w"] = "y"
			must(t, f.mgr.GetClient().Patch(t.Context(), cm, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})))
			if op := f.hooks.last(t); op.Precondition != base.ResourceVersion {
				t.Fatalf("optimistic lock not recorded: %+v", op)
			}
		}},
		{"delete records the verb", func(t *testing.T, f *fixture) {
			cm := configMap("a", nil)
			must(t, f.direct.Create(t.Context(), cm))
			must(t, f.mgr.GetClient().Delete(t.Context(), cm))
			if op := f.hooks.last(t); op.Verb != "delete" || op.RVBefore != cm.ResourceVersion {
				t.Fatalf("op %+v", op)
			}
			if err := f.direct.Get(t.Context(), client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
				t.Fatalf("still there: %v", err)
			}
		}},
		{"BeforeCall returning an error blocks the call", func(t *testing.T, f *fixture) {
			blocked := errors.New("injected crash")
			f.hooks.refuse = blocked
			rev := f.srv.Store().Rev()
			cm := configMap("a", nil)
			if err := f.mgr.GetClient().Create(t.Context(), cm); !errors.Is(err, blocked) {
				t.Fatalf("create: %v", err)
			}
			if err := f.mgr.GetAPIReader().Get(t.Context(), client.ObjectKeyFromObject(cm), cm); !errors.Is(err, blocked) {
				t.Fatalf("get: %v", err)
			}
			if f.srv.Store().Rev() != rev || cm.ResourceVersion != "" {
				t.Fatalf("a refused write reached the store")
			}
			if len(f.hooks.ops) != 0 || len(f.hooks.refused) != 2 || f.hooks.refused[0].Verb != "create" || f.hooks.refused[1].Verb != "get" {
				t.Fatalf("AfterCall saw %d ops; refused %+v", len(f.hooks.ops), f.hooks.refused)
			}
		}},
		{"event recorders reach Hooks.Event", func(t *testing.T, f *fixture) {
			cm := configMap("a", nil)
			must(t, f.mgr.GetClient().Create(t.Context(), cm))
			f.mgr.GetEventRecorderFor("old-style").Eventf(cm, corev1.EventTypeWarning, "Broken", "n=%d", 3)
			f.mgr.GetEventRecorder("new-style").Eventf(cm, nil, corev1.EventTypeNormal, "Fixed", "Fix", "ok %s", "now")
			want := []ctrlsim.Event{
				{Controller: "old-style", Object: "ConfigMap default/a", Type: "Warning", Reason: "Broken", Message: "n=3"},
				{Controller: "new-style", Object: "ConfigMap default/a", Type: "Normal", Reason: "Fixed", Message: "ok now"},
			}
			if len(f.hooks.events) != len(want) {
				t.Fatalf("events %+v", f.hooks.events)
			}
			for i := range want {
				if f.hooks.events[i] != want[i] {
					t.Errorf("event %d: %+v, want %+v", i, f.hooks.events[i], want[i])
				}
			}
			// An object without TypeMeta is named by its kind from the scheme,
			// as client-go's recorder does, not by its Go type.
			f.hooks.events = nil
			f.mgr.GetEventRecorderFor("x").Event(configMap("fresh", nil), corev1.EventTypeNormal, "R", "m")
			if len(f.hooks.events) != 1 || f.hooks.events[0].Object != "ConfigMap default/fresh" {
				t.Fatalf("events %+v", f.hooks.events)
			}
			// The server holds no Event objects (kept out of state hashes).
			var evs corev1.EventList
			must(t, f.direct.List(t.Context(), &evs))
			if len(evs.Items) != 0 {
				t.Fatalf("Event objects written: %d", len(evs.Items))
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, newFixture(t, ctrlsim.ManagerOptions{}))
		})
	}
}

// recQueue is a minimal workqueue.TypedRateLimitingInterface that records
// what controller-runtime's handlers add.
type recQueue struct {
	mu   sync.Mutex // handlers run on client-go's listener goroutines
	adds []reconcile.Request
}

var _ workqueue.TypedRateLimitingInterface[reconcile.Request] = (*recQueue)(nil)

func (q *recQueue) Add(item reconcile.Request) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.adds = append(q.adds, item)
}

func (q *recQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.adds)
}

func (q *recQueue) Get() (reconcile.Request, bool)                   { panic("recQueue: Get: a worker is running") }
func (q *recQueue) Done(reconcile.Request)                           {}
func (q *recQueue) ShutDown()                                        {}
func (q *recQueue) ShutDownWithDrain()                               {}
func (q *recQueue) ShuttingDown() bool                               { return false }
func (q *recQueue) AddAfter(item reconcile.Request, _ time.Duration) { q.Add(item) }
func (q *recQueue) AddRateLimited(item reconcile.Request)            { q.Add(item) }
func (q *recQueue) Forget(reconcile.Request)                         {}
func (q *recQueue) NumRequeues(reconcile.Request) int                { return 0 }

func (q *recQueue) names() string {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []string
	for _, r := range q.adds {
		out = append(out, r.String())
	}
	return strings.Join(out, " ")
}

type trivial struct{ seen []reconcile.Request }

func (r *trivial) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.seen = append(r.seen, req)
	return reconcile.Result{}, nil
}

// TestCapturedController: a builder-made controller is captured, not run;
// StartControllers wires the test's queue through controller-runtime's own
// Warmup, and events the cache's informer hears reach that queue through
// controller-runtime's own handler.
func TestCapturedController(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		f := newFixture(t, ctrlsim.ManagerOptions{})
		ctx := t.Context()
		must(t, f.direct.Create(ctx, configMap("pre", nil)))

		r := &trivial{}
		must(t, ctrl.NewControllerManagedBy(f.mgr).For(&corev1.ConfigMap{}).Complete(r))
		caps := f.mgr.Controllers()
		if len(caps) != 1 || caps[0].Name != "configmap" || caps[0].Reconciler == nil {
			t.Fatalf("captured %+v", caps)
		}
		// The cache is the one other runnable, as in controller-runtime's
		// manager.
		if other := f.mgr.Other(); len(other) != 1 || other[0] != manager.Runnable(f.mgr.Cache()) {
			t.Fatalf("other runnables %v", other)
		}
		if caps[0].RateLimiter != nil {
			t.Fatalf("rate limiter set before StartControllers")
		}

		deliver := wired(t, f)
		q := &recQueue{}
		var queued []string
		f.startControllers(t, deliver, func(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
			queued = append(queued, name)
			return q
		})
		if len(queued) != 1 || queued[0] != "configmap" || caps[0].RateLimiter == nil {
			t.Fatalf("queue factory called for %v; rate limiter %v", queued, caps[0].RateLimiter)
		}
		// The informer's first list reaches the new handler.
		if got := q.names(); got != "default/pre" {
			t.Fatalf("initial adds %q", got)
		}
		if kinds := f.mgr.Cache().Kinds(); len(kinds) != 1 || kinds[0] != cmGK {
			t.Fatalf("watched kinds %v", kinds)
		}
		pos, _ := f.mgr.Cache().Pos(cmGK)

		must(t, f.direct.Create(ctx, configMap("b", nil)))
		evs := f.srv.Store().Events(pos, 0)
		if len(evs) != 1 {
			t.Fatalf("%d events after the view's position", len(evs))
		}
		deliver(cmGK)
		if got := q.names(); got != "default/pre default/b" {
			t.Fatalf("after delivery %q", got)
		}
		if pos, _ := f.mgr.Cache().Pos(cmGK); pos != evs[0].Rev {
			t.Fatalf("view at %d, want %d", pos, evs[0].Rev)
		}

		// A delete reaches the queue too.
		must(t, f.direct.Delete(ctx, configMap("b", nil)))
		deliver(cmGK)
		if got := q.names(); got != "default/pre default/b default/b" {
			t.Fatalf("after delete %q", got)
		}

		// The captured reconciler is controller-runtime's, wrapping ours.
		req := reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "default", Name: "pre"}}
		if _, err := caps[0].Reconciler.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
		if len(r.seen) != 1 || r.seen[0] != req {
			t.Fatalf("reconciler saw %v", r.seen)
		}
	})
}

// TestRegister: a controller registered by hand behaves as a builder-made one.
func TestRegister(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		f := newFixture(t, ctrlsim.ManagerOptions{})
		ctx := t.Context()
		must(t, f.direct.Create(ctx, configMap("pre", nil)))
		must(t, f.mgr.Register("hand", &trivial{},
			ctrlsim.For(&corev1.ConfigMap{}),
			ctrlsim.Watches(&corev1.Secret{}, func(_ context.Context, o client.Object) []reconcile.Request {
				return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: "from-" + o.GetName()}}}
			})))
		deliver := wired(t, f)
		q := &recQueue{}
		f.startControllers(t, deliver, func(string, workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
			return q
		})
		must(t, f.direct.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "s"}}))
		deliver(f.mgr.Cache().Kinds()...)
		if got := q.names(); got != "default/pre default/from-s" {
			t.Fatalf("queue %q", got)
		}
	})
}
