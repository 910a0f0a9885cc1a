package ctrlsim_test

import (
	"testing"
	"testing/synctest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/ctrlbugs/corpus/engine/ctrlsim"
)

// TestWatchStopEndsWriter: a client stopping a watch served through the
// REST seam (a reflector whose context ends) ends the stream's writer
// goroutine even when no frame is pending; a goroutine left waiting would
// make the bubble's end a deadlock (kro's DynamicController stops its
// informers this way).
func TestWatchStopEndsWriter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, ctrlsim.ManagerOptions{})
		dyn, err := dynamic.NewForConfig(f.mgr.GetConfig())
		must(t, err)
		w, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("default").
			Watch(t.Context(), metav1.ListOptions{})
		must(t, err)
		w.Stop()
		synctest.Wait()
	})
}
