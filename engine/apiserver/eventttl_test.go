package apiserver_test

import (
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// TestEventTTL: an Event is written by kube's event storage, which gives it
// kube-apiserver's --event-ttl through an etcd lease: it is there an hour
// after its creation less the lease manager's reuse window, and gone once
// the lease (TTL plus that window, as kube's etcd3 storage grants it)
// expires on the virtual clock.
func TestEventTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, c := newServer(t, apiserver.Ablations{})
		ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "w.1"},
			InvolvedObject: corev1.ObjectReference{Kind: "Widget", Namespace: "default", Name: "w"},
			Reason:         "Tested", Message: "m", Type: corev1.EventTypeNormal, Source: corev1.EventSource{Component: "test"}}
		must(t, c.Create(t.Context(), ev))
		key := client.ObjectKeyFromObject(ev)
		time.Sleep(apiserver.EventTTL - time.Second)
		synctest.Wait()
		if err := c.Get(t.Context(), key, &corev1.Event{}); err != nil {
			t.Fatalf("an event %s after its creation: %v, want it still there", apiserver.EventTTL-time.Second, err)
		}
		// kube's lease manager grants TTL + its reuse window (60 s by
		// default) so that later events can share the lease.
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if err := c.Get(t.Context(), key, &corev1.Event{}); !apierrors.IsNotFound(err) {
			t.Fatalf("an event %s after its creation: %v, want NotFound (expired)", apiserver.EventTTL+time.Minute, err)
		}
	})
}
