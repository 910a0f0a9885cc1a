package ctrlbugs

import (
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/artifact/storage"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/runtime/patch"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/fluxcd/source-controller/ctrlbugs/s3stub"
	"github.com/fluxcd/source-controller/internal/controller"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestBucketReconcilerSmoke runs upstream's BucketReconciler (not set up through
// SetupWithManager; its patch options are set by setPatchOptions) against controller-runtime's fake client
// and the in-process S3 stub, inside a synctest bubble: finalizer, first artifact, an object
// change between reconciles, and a new revision. It is a smoke test of the stub, not the
// engine's wiring.
func TestBucketReconcilerSmoke(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s3 := s3stub.New("podinfo", map[string][]byte{"manifests/deploy.yaml": []byte("kind: Deployment\n")})
		defer s3.Install()()

		scheme := runtime.NewScheme()
		if err := clientgoscheme.AddToScheme(scheme); err != nil {
			t.Fatal(err)
		}
		if err := sourcev1.AddToScheme(scheme); err != nil {
			t.Fatal(err)
		}
		obj := &sourcev1.Bucket{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "b"},
			Spec: sourcev1.BucketSpec{
				Provider:   sourcev1.BucketProviderGeneric,
				BucketName: "podinfo",
				Endpoint:   s3.Endpoint(),
				Insecure:   true,
				Interval:   metav1.Duration{Duration: 10 * time.Minute},
				Timeout:    &metav1.Duration{Duration: 60 * time.Second},
			},
		}
		c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(obj).WithStatusSubresource(&sourcev1.Bucket{}).Build()
		r := &controller.BucketReconciler{
			Client:         c,
			EventRecorder:  &record.FakeRecorder{}, // nil channel: drops events, never blocks
			Storage:        &storage.Storage{BasePath: t.TempDir(), Hostname: "source-controller.flux-system.svc.cluster.local.", ArtifactRetentionTTL: time.Minute, ArtifactRetentionRecords: 2},
			ControllerName: "source-controller",
		}
		setPatchOptions(r)
		req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "b"}}
		get := func() *sourcev1.Bucket {
			b := &sourcev1.Bucket{}
			if err := c.Get(t.Context(), req.NamespacedName, b); err != nil {
				t.Fatal(err)
			}
			return b
		}
		reconcile := func() ctrl.Result {
			res, err := r.Reconcile(t.Context(), req)
			if err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			return res
		}

		if res := reconcile(); !res.Requeue { //nolint:staticcheck // upstream returns Requeue
			t.Fatalf("first Reconcile (finalizer) = %+v; want Requeue", res)
		}
		if res := reconcile(); res.RequeueAfter != 10*time.Minute {
			t.Fatalf("second Reconcile = %+v; want RequeueAfter 10m", res)
		}
		b := get()
		if !conditions.IsReady(b) || b.Status.Artifact == nil || b.Status.ObservedGeneration != b.Generation {
			t.Fatalf("after second Reconcile: ready=%v artifact=%v observedGeneration=%d generation=%d",
				conditions.IsReady(b), b.Status.Artifact, b.Status.ObservedGeneration, b.Generation)
		}
		rev1 := b.Status.Artifact.Revision
		t.Logf("artifact 1: revision %s digest %s path %s url %s", rev1, b.Status.Artifact.Digest, b.Status.Artifact.Path, b.Status.Artifact.URL)
		// The fake client clears TypeMeta of typed objects, so obj.Kind is "" and the path
		// lacks the "bucket/" prefix that a cached read (TypeMeta set) gives upstream
		// (UPSTREAM-MAP.md §4). If this fails, the fake client changed: update the map.
		if want := "default/b/" + strings.TrimPrefix(rev1, "sha256:") + ".tar.gz"; b.Status.Artifact.Path != want {
			t.Errorf("artifact path %q; want %q (fake client without TypeMeta)", b.Status.Artifact.Path, want)
		}

		time.Sleep(10 * time.Minute)
		s3.Put("manifests/deploy.yaml", []byte("kind: Deployment\nmetadata: {name: v2}\n"))
		reconcile()
		b = get()
		if b.Status.Artifact == nil || b.Status.Artifact.Revision == rev1 || !conditions.IsReady(b) {
			t.Fatalf("after Put: artifact %v ready %v", b.Status.Artifact, conditions.IsReady(b))
		}
		t.Logf("artifact 2: revision %s lastUpdateTime %v; Ready: %s", b.Status.Artifact.Revision, b.Status.Artifact.LastUpdateTime.Time, conditions.GetMessage(b, meta.ReadyCondition))
		t.Logf("%d S3 requests", len(s3.Requests()))
		time.Sleep(time.Hour)
	})
}

// setPatchOptions sets what upstream's SetupWithManager sets (bucket_controller.go:180,
// getPatchOptions(bucketReadyCondition.Owned, r.ControllerName)) without a manager. Without
// them, the second intermediate patch of a first reconcile fails: the conditions diff sees
// Reconciling as "modified by a different process", because reflect.DeepEqual compares an
// in-memory LastTransitionTime (UTC location, conditions/setter.go:67) with one read back
// from JSON (metav1.Time.UnmarshalJSON returns Local), and Reconciling is not owned.
func setPatchOptions(r *controller.BucketReconciler) {
	owned := []string{
		sourcev1.StorageOperationFailedCondition,
		sourcev1.FetchFailedCondition,
		sourcev1.ArtifactOutdatedCondition,
		sourcev1.ArtifactInStorageCondition,
		meta.ReadyCondition,
		meta.ReconcilingCondition,
		meta.StalledCondition,
	}
	f := reflect.ValueOf(r).Elem().FieldByName("patchOptions")
	*(*[]patch.Option)(unsafe.Pointer(f.UnsafeAddr())) = []patch.Option{
		patch.WithOwnedConditions{Conditions: owned},
		patch.WithFieldOwner(r.ControllerName),
	}
}
