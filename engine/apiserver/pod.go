package apiserver

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Pods and Nodes on create, as their strategies have them
// (pkg/registry/core/pod/strategy.go, pkg/registry/core/node/strategy.go
// in k8s.io/kubernetes, not linked; restated):
//   - a Pod's status is replaced by {phase: Pending, qosClass} (the QoS
//     class as qos.GetPodQOS computes it from cpu and memory requests and
//     limits); like the rest of rest.BeforeCreate this happens after the
//     field manager, so managed fields do not list it;
//   - a Node keeps the status it is created with (the kubelet registers
//     its node with status; the node strategy does not reset it).

func isPod(k *Kind) bool { return k.GVK.GroupKind() == schema.GroupKind{Kind: "Pod"} }

func keepsStatusOnCreate(k *Kind) bool { return k.GVK.GroupKind() == schema.GroupKind{Kind: "Node"} }

func preparePodForCreate(obj *unstructured.Unstructured) {
	pod := &corev1.Pod{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, pod); err != nil {
		return // validation has already accepted the body; keep it as is
	}
	obj.Object["status"] = map[string]any{"phase": string(corev1.PodPending), "qosClass": string(podQOS(pod))}
}

// podQOS is qos.GetPodQOS over cpu and memory: BestEffort without any
// request or limit; Guaranteed when every container limits both and the
// requests (defaulted to the limits when unset, as pod defaulting does)
// equal the limits; Burstable otherwise.
func podQOS(pod *corev1.Pod) corev1.PodQOSClass {
	requests := corev1.ResourceList{}
	limits := corev1.ResourceList{}
	guaranteed := true
	add := func(l corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
		if cur, ok := l[name]; ok {
			cur.Add(q)
			l[name] = cur
		} else {
			l[name] = q.DeepCopy()
		}
	}
	cs := append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	for _, c := range cs {
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			lim, hasLim := c.Resources.Limits[name]
			req, hasReq := c.Resources.Requests[name]
			if !hasReq && hasLim {
				req, hasReq = lim, true
			}
			if hasReq && !req.IsZero() {
				add(requests, name, req)
			}
			if hasLim && !lim.IsZero() {
				add(limits, name, lim)
			} else {
				guaranteed = false
			}
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	if guaranteed {
		for name, r := range requests {
			if l, ok := limits[name]; !ok || l.Cmp(r) != 0 {
				guaranteed = false
			}
		}
	}
	if guaranteed && len(requests) == len(limits) {
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}
