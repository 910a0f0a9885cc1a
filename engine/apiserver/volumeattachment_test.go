package apiserver_test

import (
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ctrlbugs/corpus/engine/apiserver"
)

// TestVolumeAttachment: VolumeAttachments are served as kube-apiserver
// serves them (pkg/registry/storage/volumeattachment): cluster-scoped, a
// status subresource (an update of the main resource keeps the status, an
// update of status keeps the spec), no generation bump on a status write.
// Cluster API's Machine reconciler lists them before deleting a drained
// Node.
func TestVolumeAttachment(t *testing.T) {
	_, c := newServer(t, apiserver.Ablations{})
	ctx := t.Context()
	va := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va1"},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: "csi.example.com", NodeName: "n1",
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pv1")}}}
	must(t, c.Create(ctx, va))
	if va.Namespace != "" {
		t.Errorf("namespace %q, want cluster-scoped", va.Namespace)
	}
	gen := va.Generation
	va.Status.Attached = true
	must(t, c.Status().Update(ctx, va))
	got := &storagev1.VolumeAttachment{}
	must(t, c.Get(ctx, client.ObjectKey{Name: "va1"}, got))
	if !got.Status.Attached || got.Generation != gen {
		t.Errorf("after the status update: attached %v generation %d (was %d)", got.Status.Attached, got.Generation, gen)
	}
	got.Status.Attached = false
	must(t, c.Update(ctx, got))
	must(t, c.Get(ctx, client.ObjectKey{Name: "va1"}, got))
	if !got.Status.Attached {
		t.Error("an update of the main resource changed status")
	}
	l := &storagev1.VolumeAttachmentList{}
	must(t, c.List(ctx, l))
	if len(l.Items) != 1 {
		t.Errorf("listed %d VolumeAttachments, want 1", len(l.Items))
	}
}
