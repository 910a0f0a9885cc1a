package ctrlsim_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
)

// relistHooks are recHooks that answer Relisting.
type relistHooks struct {
	*recHooks
	relist bool
	asked  [][2]int64
}

func (h *relistHooks) Relisting(_ schema.GroupKind, from, to int64) bool {
	h.asked = append(h.asked, [2]int64{from, to})
	return h.relist
}

// told records what a handler hears, one line per call.
type told struct{ lines []string }

func (r *told) OnAdd(obj any, _ bool) {
	r.lines = append(r.lines, "add "+obj.(*corev1.ConfigMap).Name+" v="+obj.(*corev1.ConfigMap).Data["v"])
}

func (r *told) OnUpdate(old, obj any) {
	o, n := old.(*corev1.ConfigMap), obj.(*corev1.ConfigMap)
	r.lines = append(r.lines, fmt.Sprintf("update %s v=%s->%s", n.Name, o.Data["v"], n.Data["v"]))
}

func (r *told) OnDelete(obj any) {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		r.lines = append(r.lines, "delete "+o.Name)
	case toolscache.DeletedFinalStateUnknown:
		r.lines = append(r.lines, fmt.Sprintf("delete %s (DeletedFinalStateUnknown, last v=%s)", o.Key, o.Obj.(*corev1.ConfigMap).Data["v"]))
	default:
		r.lines = append(r.lines, fmt.Sprintf("delete %T", obj))
	}
}
