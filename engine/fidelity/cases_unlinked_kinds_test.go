package fidelity

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The storage and endpoint kinds controllers touch (PersistentVolume,
// PersistentVolumeClaim, StorageClass, VolumeAttachment, CSINode,
// Endpoints): one rule of each kind's registry per case, on create (the
// breach refused with its causes, the same object without it accepted)
// and on update (a field the registry keeps immutable, or status apart
// from spec).

type kindRuleCase struct {
	name string
	pod  bool // needs the namespace's default ServiceAccount
	// reasonOnly: the update's refusal is compared by reason and causes,
	// not words (see the loop).
	reasonOnly bool
	// good returns a valid object; bad the same object with the breach;
	// change (optional) what an update may not do to good.
	good, bad func(ns string) client.Object
	change    func(client.Object)
}

func pvc(ns, name string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
}

func pv(ns, name string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
		Spec: corev1.PersistentVolumeSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}}}}
}

func storageClass(ns, name string) *storagev1.StorageClass {
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name}, Provisioner: "example.com/disk"}
}

func volumeAttachment(ns, name string) *storagev1.VolumeAttachment {
	return &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: "example.com", NodeName: "n1",
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pv1")}}}
}

func csiNode(ns, name string) *storagev1.CSINode {
	return &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "example.com", NodeID: "n1"}}}}
}

func endpoints(ns, name string) *corev1.Endpoints { //nolint:staticcheck // the kind under test
	return &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, //nolint:staticcheck // the kind under test
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "192.0.2.1"}}, Ports: []corev1.EndpointPort{{Port: 80}}}}} //nolint:staticcheck // the kind under test
}

var kindRuleCases = []kindRuleCase{
	{name: "pvc/no-access-modes",
		good: func(ns string) client.Object { return pvc(ns, "c") },
		bad:  func(ns string) client.Object { p := pvc(ns, "c"); p.Spec.AccessModes = nil; return p },
		change: func(o client.Object) {
			p := o.(*corev1.PersistentVolumeClaim)
			p.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
		}},
	{name: "pvc/negative-request",
		good: func(ns string) client.Object { return pvc(ns, "c") },
		bad: func(ns string) client.Object {
			p := pvc(ns, "c")
			p.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("-1Gi")
			return p
		},
		change: func(o client.Object) { o.(*corev1.PersistentVolumeClaim).Spec.StorageClassName = ptr.To("other") }},
	{name: "pvc/status-on-create-dropped",
		good: func(ns string) client.Object {
			p := pvc(ns, "c")
			p.Status.Phase = corev1.ClaimBound
			return p
		},
		bad: func(ns string) client.Object {
			p := pvc(ns, "c")
			p.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeMode("Sideways"))
			return p
		},
	},
	{name: "pv/no-source",
		good: func(ns string) client.Object { return pv(ns, "v") },
		bad: func(ns string) client.Object {
			p := pv(ns, "v")
			p.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{}
			return p
		},
		change: func(o client.Object) {
			o.(*corev1.PersistentVolume).Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/other"}}
		}},
	{name: "pv/no-capacity",
		good: func(ns string) client.Object { return pv(ns, "v") },
		bad:  func(ns string) client.Object { p := pv(ns, "v"); p.Spec.Capacity = nil; return p },
		change: func(o client.Object) {
			o.(*corev1.PersistentVolume).Spec.PersistentVolumeReclaimPolicy = "Sometimes"
		}},
	{name: "storageclass/no-provisioner",
		good:   func(ns string) client.Object { return storageClass(ns, "s") },
		bad:    func(ns string) client.Object { s := storageClass(ns, "s"); s.Provisioner = ""; return s },
		change: func(o client.Object) { o.(*storagev1.StorageClass).Provisioner = "example.com/other" }},
	{name: "storageclass/bad-binding-mode",
		good: func(ns string) client.Object { return storageClass(ns, "s") },
		bad: func(ns string) client.Object {
			s := storageClass(ns, "s")
			s.VolumeBindingMode = ptr.To(storagev1.VolumeBindingMode("Eventually"))
			return s
		},
		change: func(o client.Object) { o.(*storagev1.StorageClass).Parameters = map[string]string{"k": "v"} }},
	{name: "volumeattachment/no-attacher",
		good:   func(ns string) client.Object { return volumeAttachment(ns, "a") },
		bad:    func(ns string) client.Object { v := volumeAttachment(ns, "a"); v.Spec.Attacher = ""; return v },
		change: func(o client.Object) { o.(*storagev1.VolumeAttachment).Spec.NodeName = "n2" }},
	{name: "volumeattachment/two-sources",
		good: func(ns string) client.Object { return volumeAttachment(ns, "a") },
		bad: func(ns string) client.Object {
			v := volumeAttachment(ns, "a")
			v.Spec.Source.InlineVolumeSpec = &corev1.PersistentVolumeSpec{}
			return v
		},
		change: func(o client.Object) { o.(*storagev1.VolumeAttachment).Status.Attached = true }},
	{name: "csinode/duplicate-driver",
		good: func(ns string) client.Object { return csiNode(ns, "n") },
		bad: func(ns string) client.Object {
			c := csiNode(ns, "n")
			c.Spec.Drivers = append(c.Spec.Drivers, c.Spec.Drivers[0])
			return c
		},
		change: func(o client.Object) { o.(*storagev1.CSINode).Spec.Drivers[0].NodeID = "n9" }},
	{name: "endpoints/bad-ip",
		good: func(ns string) client.Object { return endpoints(ns, "e") },
		bad: func(ns string) client.Object {
			e := endpoints(ns, "e")
			e.Subsets[0].Addresses[0].IP = "not-an-ip" //nolint:staticcheck // the kind under test
			return e
		},
		change: func(o client.Object) {
			o.(*corev1.Endpoints).Subsets[0].Ports[0].Port = 0 //nolint:staticcheck // the kind under test
		}},
}

func init() {
	for _, kc := range append(kindRuleCases, moreKindRuleCases...) {
		register("kindrule/"+kc.name, func(ctx context.Context, c client.Client, ns string, o *Observation) {
			if kc.pod && !defaultSA(ctx, c, ns, o) {
				return
			}
			errWords(o, "create-bad", c.Create(ctx, kc.bad(ns), own))
			good := kc.good(ns)
			if !o.Err("create-good", c.Create(ctx, good, own)) {
				return
			}
			defer func() { _ = c.Delete(ctx, good) }()
			o.RV("create-good", good)
			o.Add("good.generation", good.GetGeneration())
			if st := field(good, "status"); st != nil {
				o.Add("good.status", st)
			}
			if kc.change == nil {
				return
			}
			kc.change(good)
			if kc.pod || kc.reasonOnly {
				// A pod's refusal quotes its spec, which differs where the
				// engine has no ServiceAccount admission (a known
				// difference); kube's namespace strategy reports a metadata
				// error once per validation it runs (four times), the
				// engine once: reason and causes only.
				o.Err("update", c.Update(ctx, good, own))
				return
			}
			errWords(o, "update", c.Update(ctx, good, own))
		})
	}
}

// An update without a resourceVersion: allowed where the kind's strategy
// allows unconditional updates (StorageClass, PersistentVolume,
// Endpoints), refused where it does not (VolumeAttachment, CSINode).
var _ = register("kindrule/unconditional-update", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	for _, tc := range []struct {
		name string
		obj  client.Object
	}{
		{"storageclass", storageClass(ns, "s")},
		{"pv", pv(ns, "v")},
		{"endpoints", endpoints(ns, "e")},
		{"volumeattachment", volumeAttachment(ns, "a")},
		{"csinode", csiNode(ns, "n")},
	} {
		if !o.Err(tc.name+".create", c.Create(ctx, tc.obj, own)) {
			continue
		}
		tc.obj.SetResourceVersion("")
		tc.obj.SetLabels(map[string]string{"touched": "yes"})
		errWords(o, tc.name+".update-without-rv", c.Update(ctx, tc.obj, own))
		_ = c.Delete(ctx, tc.obj)
	}
})

// Status of the storage kinds goes through the status subresource only.
var _ = register("kindrule/storage-status-apart", func(ctx context.Context, c client.Client, ns string, o *Observation) {
	claim := pvc(ns, "c")
	if !o.Err("pvc.create", c.Create(ctx, claim, own)) {
		return
	}
	claim.Status.Phase = corev1.ClaimBound
	o.Err("pvc.main-update", c.Update(ctx, claim, own))
	o.Add("pvc.main.phase", string(claim.Status.Phase))
	claim.Status.Phase = corev1.ClaimBound
	o.Err("pvc.status-update", c.Status().Update(ctx, claim, own))
	o.Add("pvc.status.phase", string(claim.Status.Phase))
	va := volumeAttachment(ns, "a")
	if !o.Err("va.create", c.Create(ctx, va, own)) {
		return
	}
	defer func() { _ = c.Delete(ctx, va) }()
	va.Status.Attached = true
	o.Err("va.status-update", c.Status().Update(ctx, va, own))
	o.Add("va.status.attached", va.Status.Attached)
	va.Spec.NodeName = "n2"
	errWords(o, "va.status-changes-spec", c.Status().Update(ctx, va, own))
	o.Add("va.spec.nodeName", va.Spec.NodeName)
})
