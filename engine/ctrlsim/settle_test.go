package ctrlsim_test

import (
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
)

// TestSettledRegistration: a handler added to a synced informer of the
// manager's cache is not synced at the instant it is added, even once its
// listener's goroutines have all run there (upstream's registration then
// is), and is at the next instant; the informer is still a client-go
// SharedIndexInformer (Cluster API asserts it), and the registration can
// be removed. Without settled, the registration's HasSynced at that
// instant depends on whether those goroutines ran before the check, which
// a controller-runtime source makes at once: a warm-up that ended 100 ms
// apart between executions of the same run.
func TestSettledRegistration(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		f := newFixture(t, ctrlsim.ManagerOptions{UpstreamCache: &cache.Options{}})
		ctx := bounded(t)
		must(t, f.direct.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}}))
		f.started(t, &corev1.ConfigMap{})
		inf, err := f.mgr.GetCache().GetInformer(ctx, &corev1.ConfigMap{})
		must(t, err)
		sii, ok := inf.(toolscache.SharedIndexInformer)
		if !ok {
			t.Fatalf("the informer is a %T, not a SharedIndexInformer", inf)
		}
		if !sii.HasSynced() {
			t.Fatal("the informer has not synced")
		}
		reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{})
		must(t, err)
		synctest.Wait() // the listener's goroutines have run
		select {
		case <-reg.HasSyncedChecker().Done(): // upstream's, passed through
		default:
			t.Fatal("upstream's registration is not synced once its listener ran: the test shows nothing")
		}
		if reg.HasSynced() {
			t.Error("the registration is synced at the instant it was added")
		}
		time.Sleep(time.Nanosecond)
		if !reg.HasSynced() {
			t.Error("the registration is not synced at the next instant")
		}
		must(t, inf.RemoveEventHandler(reg))
	})
}
