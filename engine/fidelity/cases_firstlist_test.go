package fidelity

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// An informer's first list, both ways client-go v0.36's reflector makes
// it (the engine's serverversion package decides which one a simulated
// release gets; the real server here, 1.36, serves both):
//
//   - firstlist/reflector-watch-list: the client's default (WatchListClient
//     on): one watch with sendInitialEvents, resourceVersionMatch
//     NotOlderThan and no resourceVersion, its initial events ended by a
//     bookmark annotated k8s.io/initial-events-end; the reflector's store
//     then holds every object, and a later write arrives on that watch;
//   - firstlist/reflector-list-rv0: a lister-watcher that does not support
//     watch-list semantics (what a client or server without WatchList
//     gets): a LIST at resourceVersion=0, then a watch from the list's
//     resourceVersion.
//
// Each records the requests the reflector made, in order, and what its
// store held once synced and after one more write.

// recordingLW is a lister-watcher over one dynamic resource that records
// the requests a reflector makes.
type recordingLW struct {
	res  dynamic.ResourceInterface
	mu   sync.Mutex
	reqs []string
}

func (l *recordingLW) record(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = append(l.reqs, s)
}

func (l *recordingLW) requests() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reqs)
}

func (l *recordingLW) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	l.record(fmt.Sprintf("list rv=%q match=%q", opts.ResourceVersion, opts.ResourceVersionMatch))
	return l.res.List(ctx, opts)
}

func (l *recordingLW) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	initial := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	rv := opts.ResourceVersion
	if !initial && rv != "" && rv != "0" {
		// The list's resourceVersion differs between the servers.
		rv = "<list rv>"
	}
	l.record(fmt.Sprintf("watch rv=%q sendInitialEvents=%v match=%q bookmarks=%v", rv, initial, opts.ResourceVersionMatch, opts.AllowWatchBookmarks))
	return l.res.Watch(ctx, opts)
}

// List and Watch make recordingLW a cache.ListerWatcher (what
// NewReflectorWithOptions takes; it calls the context forms).
func (l *recordingLW) List(opts metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), opts)
}

func (l *recordingLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), opts)
}

// noWatchListLW is recordingLW that says it does not support watch-list
// semantics: the reflector lists instead.
type noWatchListLW struct{ *recordingLW }

func (noWatchListLW) IsWatchListSemanticsUnSupported() bool { return true }

func firstListCase(watchList bool) func(ctx context.Context, c client.Client, ns string, o *Observation) {
	return func(ctx context.Context, c client.Client, ns string, o *Observation) {
		d := dynamicFor(c, o)
		if d == nil {
			return
		}
		cms := d.Resource(cmGVR).Namespace(ns)
		for _, n := range []string{"b", "a"} {
			if _, err := cms.Create(ctx, cmObj(ns, n), metav1.CreateOptions{}); !o.Err("create."+n, err) {
				return
			}
		}
		rec := &recordingLW{res: cms}
		var lw cache.ListerWatcher = rec
		if !watchList {
			lw = noWatchListLW{rec}
		}
		example := &unstructured.Unstructured{}
		example.SetAPIVersion("v1")
		example.SetKind("ConfigMap")
		store := cache.NewStore(cache.MetaNamespaceKeyFunc)
		r := cache.NewReflectorWithOptions(lw, example, store, cache.ReflectorOptions{Name: "fidelity"})
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			r.RunWithContext(rctx)
		}()
		defer func() {
			cancel()
			<-done
		}()
		names := func() string {
			var out []string
			for _, k := range store.ListKeys() {
				out = append(out, strings.TrimPrefix(k, ns+"/"))
			}
			slices.Sort(out)
			return strings.Join(out, ",")
		}
		wait := func(want string) string {
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				if got := names(); got == want {
					return got
				}
				time.Sleep(20 * time.Millisecond)
			}
			return names()
		}
		o.Add("synced.objects", wait("a,b"))
		o.Add("synced.lastSyncResourceVersionSet", r.LastSyncResourceVersion() != "")
		if _, err := cms.Create(ctx, cmObj(ns, "c"), metav1.CreateOptions{}); !o.Err("create.c", err) {
			return
		}
		o.Add("after.create.objects", wait("a,b,c"))
		for i, q := range rec.requests() {
			o.Add(fmt.Sprintf("request.%d", i), q)
		}
	}
}

var _ = register("firstlist/reflector-watch-list", firstListCase(true))
var _ = register("firstlist/reflector-list-rv0", firstListCase(false))
