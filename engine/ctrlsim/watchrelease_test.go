package ctrlsim_test

import (
	"context"
	"runtime"
	"testing"
	"testing/synctest"
	"weak"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ctrlbugs/corpus/engine/apiserver"
	"github.com/ctrlbugs/corpus/engine/ctrlsim"
)

// TestFrontReleasesServer: once a watch or a delete through the handler
// front has ended, nothing the handler leaves behind keeps the process's
// server reachable. Kube's watch and write handlers make a timer for the
// request's deadline (context.WithTimeout); a stopped timer stays in its
// synctest bubble's heap until the time it would have fired, with the
// context it cancels, and a bubble lives on after its run while an
// upstream goroutine that never stops is left in it. When that context
// reached the process, every run of an exploration kept its server
// (Karpenter's 200 runs of karpenter-16 peaked at 2.5 GB). Each request is
// made with a context that reaches the process, as a reconcile's does
// (here a value holding the fixture).
func TestFrontReleasesServer(t *testing.T) {
	for name, serve := range map[string]func(ctx context.Context, t *testing.T, cs kubernetes.Interface){
		"watch": func(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
			l, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
			must(t, err)
			w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
			must(t, err)
			synctest.Wait()
			w.Stop()
		},
		"delete": func(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
			must(t, cs.CoreV1().ConfigMaps("default").Delete(ctx, "a", metav1.DeleteOptions{}))
		},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				gone := func() weak.Pointer[apiserver.Server] {
					f := newFixture(t, ctrlsim.ManagerOptions{})
					ctx := context.WithValue(t.Context(), processKey{}, f)
					must(t, f.direct.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}}))
					cs, err := kubernetes.NewForConfig(f.mgr.GetConfig())
					must(t, err)
					serve(ctx, t, cs)
					synctest.Wait()
					return weak.Make(f.srv)
				}()
				runtime.GC()
				runtime.GC()
				if gone.Value() != nil {
					t.Errorf("the server is still reachable after its only %s ended", name)
				}
			})
		})
	}
}

type processKey struct{}
