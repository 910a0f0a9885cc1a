package apiserver

import (
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
// (Kind.strategy): kube-apiserver's own where it is linked (linked.go),
// apiextensions-apiserver's Prepare methods for custom resources
// (customresource.go), the engine's generic strategy for the other
// built-ins (generic.go), the namespace registry's rules (namespace.go) and
// the CRD registry's (crdlife.go).
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
	shouldDeleteDuringUpdate(old, obj *unstructured.Unstructured) bool
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
