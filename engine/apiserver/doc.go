// Package apiserver applies kube-apiserver's request semantics to the
// engine's versioned store.
//
// A Server answers the verbs a controller uses — Create, Get, List, Update,
// Patch (JSON merge, strategic merge, JSON patch), server-side Apply, Delete
// and DeleteCollection — on the main resource and on the status subresource,
// with the errors kube-apiserver would return (apierrors NotFound,
// AlreadyExists, Conflict, Invalid, BadRequest, Forbidden).
//
// What it does, and which upstream code does it:
//   - resourceVersion on every write; 409 Conflict on a stale resourceVersion
//     in an Update, in a patch that carries metadata.resourceVersion (what
//     controller-runtime's MergeFromWithOptimisticLock sends), or in an apply
//     to an existing object; an apply to a missing object creates it, whatever
//     resourceVersion it carries (the patch handler creates through the
//     storage's update path, which has no precondition for a missing object).
//   - identity: a uid in an Update body is a precondition (409); a patch or
//     apply that changes metadata.uid fails object-meta validation (422); a
//     body whose namespace differs from the request's is 400 (k8s.io/apiserver's
//     rest.EnsureObjectNamespaceMatchesRequestNamespace).
//   - metadata.generation: 1 on create and +1 when anything outside metadata
//     (and outside status, when the status subresource is enabled) changes,
//     for custom resources and for the built-ins whose strategy tracks it;
//     +1 when a graceful deletion sets deletionTimestamp.
//   - status subresource: the main resource ignores status, the subresource
//     ignores everything but status; status is dropped on create.
//   - no-op writes: an update or patch that changes nothing writes nothing and
//     keeps the resourceVersion.
//   - deletion: finalizers hold the object with deletionTimestamp set until the
//     last one is removed (every delete of a held object sets
//     deletionGracePeriodSeconds 0, as the generic registry's markAsDeleting); orphan and foreground propagation add their
//     finalizers (the garbage collector that acts on them is package builtin).
//   - managed fields and server-side apply, through apimachinery's
//     managedfields.FieldManager (structured-merge-diff), with type converters
//     built from client-go's built-in schemas and, for CRDs, from the CRD's
//     OpenAPI schema via apiextensions-apiserver's own builder.
//   - CRD structural defaulting and pruning, via apiextensions-apiserver.
//   - CRD lifecycle (crdlife.go): a CustomResourceDefinition written through
//     the API is served at once, and a status write by "apiextensions-
//     apiserver" follows it (acceptedNames, storedVersions, NamesAccepted
//     and Established), as kube-apiserver's naming and establishing
//     controllers do; deleting it adds the cleanup finalizer, deletes its
//     objects, and once none is left removes the CRD and stops serving its
//     kind.
//   - owner references: exact duplicates in a request body are collapsed
//     (before managed fields on create and update, after them on patch), as
//     the real handlers' dedupOwnerReferences does (unexported in
//     k8s.io/apiserver, restated; the warning is not returned).
//   - an error that is not an API status (e.g. the field manager refusing an
//     apply configuration with duplicate list-map keys) becomes the 500 that
//     k8s.io/apiserver's responsewriters.ErrorToAPIStatus makes of it.
//   - pods and nodes on create (pod.go): a Pod's status becomes {phase:
//     Pending, qosClass}; a Node keeps its status (their strategies).
//   - eviction (eviction.go): pods/<name>/eviction with PodDisruptionBudgets,
//     as kube-apiserver's eviction REST decides it (unready pods under a
//     healthy budget, checkAndDecrement, 429 with the DisruptionBudget
//     cause, the budget's status write).
//   - namespaces: the four namespaces kube-apiserver creates at start-up
//     exist; a namespaced object can be created only in an existing namespace
//     (404) whose phase is not Terminating (403 with a NamespaceTerminating
//     cause, built with k8s.io/apiserver's admission.NewForbidden as the
//     NamespaceLifecycle plugin builds it); default, kube-system and
//     kube-public cannot be deleted (403). The namespace registry's own rules
//     (k8s.io/kubernetes/pkg/registry/core/namespace, not linked: restated in
//     namespace.go): a new namespace is Active with "kubernetes" in
//     spec.finalizers and the kubernetes.io/metadata.name label; an update
//     keeps spec.finalizers and status, which only the finalize and status
//     subresources change; the first delete sets deletionTimestamp and phase
//     Terminating and keeps the namespace; it goes once spec.finalizers and
//     metadata.finalizers are both empty (a finalize that empties them, or a
//     later delete). Emptying spec.finalizers is the namespace controller's
//     job (package builtin). Fidelity: ns/*.
//
// # Fidelity
//
// Deliberate simplifications, each pinned by tests (see also the fidelity
// suite in engine/fidelity, which runs the same calls against a real
// kube-apiserver):
//   - One version per kind: no conversion between API versions.
//   - CRD lifecycle: the apiextensions controllers' writes follow the CRD
//     write at once (the real ones take milliseconds, so a controller may
//     see a CRD without Established in between; here it never does unless
//     installing its schema fails, which leaves Established False). CRDs a
//     harness installs at boot (InstallCRD) are served without a stored
//     CRD object. A terminating CRD held by objects with finalizers is
//     looked at again only on its next write (the finalizer controller's
//     resync is not modelled). The RESTMapper keeps a removed kind's
//     mapping (requests for it are 404s). CRD objects' managed fields are
//     deduced from the object (no schema for them is linkable: client-go's
//     has none and apiextensions' apply configurations are untyped), so
//     their lists are atomic to server-side apply.
//   - Built-in defaulting and validation are not run (k8s.io/kubernetes'
//     internal registry is not linked). What is run: apimachinery's
//     object-meta validation (names, labels, annotations, owner references,
//     immutable fields, no new finalizers on terminating objects), core
//     validation's finalizer-name rule for built-in kinds, ConfigMap and
//     Secret immutability and the immutable Secret type. What is decoded as
//     the real server's v1 -> internal conversion and defaulting would
//     (decode.go, hand-written: pkg/apis/core/v1 is not linked): a Secret's
//     stringData is merged into data and dropped, and an empty type becomes
//     Opaque (fidelity: secret/*).
//     CRD validation beyond structural pruning and defaulting (OpenAPI value
//     validation, CEL rules, ratcheting) is not run.
//   - No admission webhooks or admission plugins except NamespaceLifecycle,
//     which reads the namespace from storage (the real plugin reads an
//     informer cache and falls back to a live read).
//     In particular no ServiceAccount admission: a real server refuses a
//     pod whose namespace has no "default" ServiceAccount and mounts its
//     token; the engine does neither (fidelity cases create the account).
//   - Namespace status and finalize updates are not validated (phase against
//     deletionTimestamp, finalizer names in spec.finalizers).
//   - Graceful deletion periods (pods) are not modelled: an object without
//     finalizers is removed at once.
//   - Field selectors: metadata.name and metadata.namespace only.
//   - The scale subresource (CRD scale paths; Deployment, ReplicaSet,
//     StatefulSet) reads and writes replicas; its managed fields are
//     computed directly (the writer takes ownership of the replicas path
//     under subresource "scale", with no time), not through managedfields'
//     ScaleHandler.
//   - Built-in kinds not in the engine's table are assumed to have neither a
//     status subresource nor generation tracking unless their Go type has a
//     Status field (then both are assumed).
//   - History is never compacted and there is no watch-cache window: a watch
//     (through ctrlsim's REST seam) may resume from any resourceVersion at
//     or after its kind began to be served (Kind.ServedSince), and one from
//     before is answered 410 Expired as the kind's watch cache would (a real
//     server creates a CRD's cache at the first request for its resources,
//     the engine when the CRD is served; fidelity:
//     watch/expired-before-kind-served). A real server that has compacted,
//     or whose watch cache has moved on, answers 410 where the engine
//     streams (fidelity: watch/builtin-from-rv-1 pins where they agree).
//   - Discovery (Kind.Verbs, Subresources) lists the subresources the engine
//     serves (status, scale, a Pod's eviction, a Namespace's finalize), no
//     short names or categories, and a singular name that is the lowercase
//     kind (fidelity: discovery/*).
//   - Ablations (Options.Ablations) switch single semantics off on purpose, to
//     show how an unfaithful simulator produces a false finding.
package apiserver
