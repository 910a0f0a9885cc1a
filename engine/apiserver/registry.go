package apiserver

import (
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// writeStrategy is one kind's rules for the server's single write path
// (write.go: create and update; delete.go), shaped as kube-apiserver's
// generic store (k8s.io/apiserver/pkg/registry/generic/registry/store.go):
// the path is the store's Create/Update/Delete, run alike for every kind;
// the strategy is its CreateStrategy, UpdateStrategy and DeleteStrategy
// (PrepareForCreate/Update, Validate, Canonicalize, through
// rest.BeforeCreate/BeforeUpdate), ShouldDeleteDuringUpdate and the
// AfterCreate/AfterUpdate/AfterDelete hooks. Every kind has one
// (Kind.strategy): kube-apiserver's own where it is linked (linked.go), the
// engine's generic strategy for the rest (genericStrategy), the namespace
// registry's rules (namespace.go) and the CRD registry's (crdlife.go).
type writeStrategy interface {
	// storageChecksFirst reports whether a create with a resourceVersion,
	// or of a name that is taken, is refused before the create runs the
	// field manager and the strategy (see genericStrategy).
	storageChecksFirst() bool
	// prepareForCreate changes a new object before the field manager sees
	// it (system fields are set already): generation and status.
	prepareForCreate(s *Server, k *Kind, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)
	// beforeCreate is rest.BeforeCreate's part of the strategy, after the
	// field manager: PrepareForCreate, Validate, Canonicalize.
	beforeCreate(s *Server, k *Kind, obj *unstructured.Unstructured, dryRun bool) (*unstructured.Unstructured, error)
	// prepareForUpdate changes an updated object (system fields kept from
	// old already) before validation and the field manager.
	prepareForUpdate(s *Server, k *Kind, sub string, old, obj *unstructured.Unstructured)
	// beforeUpdate is rest.BeforeUpdate's part of the strategy of sub,
	// after the field manager.
	beforeUpdate(s *Server, k *Kind, sub string, old, obj *unstructured.Unstructured, dryRun bool) (*unstructured.Unstructured, error)
	// shouldDeleteDuringUpdate reports whether an update that leaves obj
	// is its deletion (the generic store's ShouldDeleteDuringUpdate: a
	// deletionTimestamp and no finalizers left).
	shouldDeleteDuringUpdate(obj *unstructured.Unstructured) bool
	// allowCreateOnUpdate is the strategy's AllowCreateOnUpdate.
	allowCreateOnUpdate(k *Kind, namespace string) bool
	// allowUnconditionalUpdate is the strategy's AllowUnconditionalUpdate.
	allowUnconditionalUpdate(k *Kind) bool
	// defaultOrphans reports whether the strategy's
	// DefaultGarbageCollectionPolicy orphans dependents.
	defaultOrphans(k *Kind, obj *unstructured.Unstructured) bool
	// delete is the kind's Delete of old, found in storage (the generic
	// store's: Server.delete; the namespace registry has its own).
	delete(s *Server, k *Kind, req Request, old *unstructured.Unstructured, opts metav1.DeleteOptions) (*unstructured.Unstructured, error)
	// deleteFinalizers returns the finalizers a delete of old starts from
	// (a storage's own Delete may add one).
	deleteFinalizers(old *unstructured.Unstructured) []string
	// builtinMeta reports whether core validation's finalizer-name rule and
	// the built-in status strategies' metadata rule apply (validateMeta,
	// statusKeepsMetadata), rather than apimachinery's alone.
	builtinMeta() bool
	// subresources lists the subresources the kind's writes may name
	// besides status (the namespace's finalize).
	subresources() []string
	// afterWrite runs after a write was stored and reported (the generic
	// store's AfterCreate/AfterUpdate/AfterDelete): what the server does
	// in its wake.
	afterWrite(s *Server, w Write)
	// registry returns kube-apiserver's strategy for a linked kind.
	registry() (*linkedStrategy, bool)
}

// genericStrategy is the engine's strategy for the kinds whose registry is
// not linked (custom resources; Node, Event, PersistentVolume(Claim) and
// the other built-ins outside linked.go): object-meta validation only, the
// status reset on create and the generation bump on a spec change restated
// (as customresource.NewStrategy and the unlinked registries do).
//
// It refuses a create that carries a resourceVersion, or whose name is
// taken, before the field manager runs: the engine's order from before the
// registry was linked. kube-apiserver refuses both in storage, after
// admission, the field manager and validation (as linkedStrategy does);
// moving them would make such a refused create draw from math/rand's
// global source as the field manager does, which the recorded traces of
// controllers that create what exists already depend on.
type genericStrategy struct {
	// builtin: see writeStrategy.builtinMeta.
	builtin bool
	// keepsStatus: a create keeps the status it is sent (the node
	// strategy; pkg/registry/core/node, not linked): the kubelet registers
	// its node with status.
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

func (genericStrategy) shouldDeleteDuringUpdate(obj *unstructured.Unstructured) bool {
	return obj.GetDeletionTimestamp() != nil && len(obj.GetFinalizers()) == 0
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

// customResourceStrategy is the strategy of a CRD's kind: the generic one,
// where apiextensions-apiserver's customresource.NewStrategy would be (its
// schema validation is not modelled); like it, it refuses an update
// without a resourceVersion.
type customResourceStrategy struct{ genericStrategy }

func (customResourceStrategy) allowUnconditionalUpdate(*Kind) bool { return false }
