package ctrlsim_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
)

// staleView is Hooks that show the controller every kind as it was at one
// store revision (an informer that lags) and keep every call it makes.
type staleView struct {
	ctrlsim.NopHooks
	rev int64
	ops []ctrlsim.Op
}

func (h *staleView) Visible(schema.GroupKind) int64 { return h.rev }
func (h *staleView) AfterCall(op *ctrlsim.Op)       { h.ops = append(h.ops, *op) }

// A controller's manager reads through its cache (controller-runtime's)
// at the revision its Hooks make visible, and live through its API reader; each call is recorded at
// the boundary with what the controller saw (ObservedRV) and what the server
// held then (CurrentRV): how the engine shows a controller a stale view and
// the trace shows that it acted on one.
func ExampleNewManager() {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	start := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	srv, err := apiserver.New(apiserver.Options{Scheme: scheme, Clock: func() time.Time { return start }})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The cluster, written by another client: v=1, then v=2.
	ctx := context.Background()
	other := ctrlsim.NewDirectClient(srv, scheme)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cm"}, Data: map[string]string{"v": "1"}}
	if err := other.Create(ctx, cm); err != nil {
		fmt.Println(err)
		return
	}
	hooks := &staleView{rev: srv.Store().Rev()} // the view stops at v=1
	cm.Data["v"] = "2"
	if err := other.Update(ctx, cm); err != nil {
		fmt.Println(err)
		return
	}

	mgr, err := ctrlsim.NewManager(ctrlsim.NewEnv(srv), "example", hooks, ctrlsim.ManagerOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The manager's cache is controller-runtime's: started as its manager
	// starts it, its informer's reflector watching through the engine,
	// which decides when each frame of the stream is written (the
	// explorer releases them one at a time at quiescent points; here all
	// at once, until the informer has synced).
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = mgr.Cache().Start(ctx) }()
	inf, err := mgr.GetCache().GetInformer(ctx, &corev1.ConfigMap{}, cache.BlockUntilSynced(false))
	if err != nil {
		fmt.Println(err)
		return
	}
	for !inf.HasSynced() {
		mgr.Cache().FlushWatches()
		time.Sleep(time.Millisecond)
	}
	key := client.ObjectKey{Namespace: "default", Name: "cm"}
	var cached, live corev1.ConfigMap
	if err := mgr.GetClient().Get(ctx, key, &cached); err != nil {
		fmt.Println(err)
		return
	}
	if err := mgr.GetAPIReader().Get(ctx, key, &live); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("cached v:", cached.Data["v"], "live v:", live.Data["v"])
	for _, op := range hooks.ops {
		line := fmt.Sprintf("%s %s %s/%s observed rv %s", op.Verb, op.GVK.Kind, op.Namespace, op.Name, op.ObservedRV)
		if op.Cached {
			line += fmt.Sprintf(" (cached; the server's rv %s)", op.CurrentRV)
		}
		fmt.Println(line)
	}
	// Output:
	// cached v: 1 live v: 2
	// get ConfigMap default/cm observed rv 5 (cached; the server's rv 6)
	// get ConfigMap default/cm observed rv 6
}
