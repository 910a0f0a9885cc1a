package apiserver

import (
	"context"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
)

// genericStrategy is the engine's strategy for the built-in kinds whose
// registry is not linked (Node, Event, PersistentVolume(Claim) and the
// other built-ins outside linked.go): object-meta validation only, the
// status reset on create and the generation bump on a spec change restated
// (as the unlinked registries do). Custom resources embed it with
// apiextensions-apiserver's own Prepare methods (customresource.go).
//
// It refuses a create that carries a resourceVersion, or whose name is
// taken, before the field manager runs: the engine's order from before the
// registry was linked, kept for the kinds the engine still writes itself.
// kube-apiserver refuses both in storage, after admission, the field
// manager and validation, as kube's REST storage does where it writes
// (custom resources and the linked kinds: registrystorage.go).
type genericStrategy struct {
	// builtin: see writeStrategy.builtinMeta.
	builtin bool
	// keepsStatus: a create keeps the status it is sent, where the kind's
	// own PrepareForCreate does (pkg/registry/core/node: the kubelet
	// registers its node with status).
	keepsStatus bool
}

func (genericStrategy) storageChecksFirst() bool { return true }

func (g genericStrategy) prepareForCreate(s *Server, k *Kind, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return prepareForCreate(s, k, obj, g.keepsStatus)
}

// prepareForCreate sets a new object's generation (1 for a kind that
// tracks it) and drops its status when the kind has a status subresource
// (PrepareForCreate: a create may not set status), unless keepStatus; the
// object is then decoded again, as a body without status would have been.
func prepareForCreate(s *Server, k *Kind, obj *unstructured.Unstructured, keepStatus bool) (*unstructured.Unstructured, error) {
	if k.Generation && !s.ablate.Generation {
		obj.SetGeneration(1)
	} else if !s.ablate.Generation {
		obj.SetGeneration(0)
	}
	if !s.hasStatus(k) || keepStatus {
		return obj, nil
	}
	unstructured.RemoveNestedField(obj.Object, "status")
	return s.normalize(k, obj)
}

func (genericStrategy) beforeCreate(_ *Server, _ *Kind, obj *unstructured.Unstructured, _ bool) (*unstructured.Unstructured, error) {
	return obj, nil
}

// prepareForUpdate bumps generation when anything outside metadata (and
// status, for a kind with a status subresource) changed.
func (genericStrategy) prepareForUpdate(s *Server, k *Kind, _ string, old, obj *unstructured.Unstructured) {
	if k.Generation && !s.ablate.Generation &&
		!apiequality.Semantic.DeepEqual(nonMetadata(obj, s.hasStatus(k)), nonMetadata(old, s.hasStatus(k))) {
		obj.SetGeneration(old.GetGeneration() + 1)
	}
}

func (genericStrategy) beforeUpdate(_ *Server, _ *Kind, _ string, _, obj *unstructured.Unstructured, _ bool) (*unstructured.Unstructured, error) {
	return obj, nil
}

// shouldDeleteDuringUpdate is the generic store's own
// (genericregistry.ShouldDeleteDuringUpdate): no finalizers left, on an
// object being deleted with no grace period left (a pod still in its
// grace period is updated, e.g. by its kubelet, not deleted).
func (genericStrategy) shouldDeleteDuringUpdate(old, obj *unstructured.Unstructured) bool {
	return genericregistry.ShouldDeleteDuringUpdate(context.Background(), "", obj, old)
}

func (genericStrategy) allowCreateOnUpdate(*Kind, string) bool { return false }

func (genericStrategy) allowUnconditionalUpdate(*Kind) bool { return true }

func (genericStrategy) defaultOrphans(*Kind, *unstructured.Unstructured) bool { return false }

func (genericStrategy) delete(s *Server, k *Kind, req Request, old *unstructured.Unstructured, opts metav1.DeleteOptions) (*unstructured.Unstructured, error) {
	return s.delete(k, req, old, opts)
}

func (genericStrategy) deleteFinalizers(old *unstructured.Unstructured) []string {
	return old.GetFinalizers()
}

func (g genericStrategy) builtinMeta() bool { return g.builtin }

func (genericStrategy) subresources() []string { return nil }

func (genericStrategy) afterWrite(*Server, Write) {}

func (genericStrategy) registry() (*linkedStrategy, bool) { return nil, false }
