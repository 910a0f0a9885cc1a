// Package builtin holds Kubernetes' own controllers that the engine runs
// beside upstream ones, written as ordinary reconcilers against the
// controller-runtime client so that the explorer schedules (and may perturb)
// them like any other controller.
//
// GarbageCollector is kube-controller-manager's ownerReference garbage
// collector: it deletes dependents whose owners are all gone, removes
// dangling owner references when some owners remain, deletes the dependents
// of an owner under foreground deletion before removing its
// foregroundDeletion finalizer, and orphans dependents (removes their owner
// references) before removing an owner's orphan finalizer.
//
// NamespaceController is kube-controller-manager's namespace controller: for
// a namespace being deleted whose spec.finalizers still holds "kubernetes",
// it deletes every namespaced object in it and, once none is left, removes
// "kubernetes" through the finalize subresource (the apiserver then removes
// the namespace).
//
// # Fidelity
//
//   - Like the real collector, it learns about objects from informers (its
//     cached client, which the explorer may hold back) and verifies that an
//     owner is absent with a live read before deleting a dependent (the real
//     collector's isDangling does a live GET).
//   - Kinds served after the collector started (CRDs created during the
//     run) are watched from its next reconcile on, and a CRD's creation
//     makes one; the real collector re-reads discovery every 30 s and
//     starts monitors for new resources then (TestGarbageCollectorRuntimeKinds).
//   - Dependents of a foreground-deleting owner are deleted in the
//     background; the owner's finalizer is removed once no dependent with
//     blockOwnerDeletion=true remains. The real collector's dependency graph,
//     its "virtual" owner nodes and its cluster-scoped/namespaced mismatch
//     events are not modelled.
//   - Requests name objects as "Kind.group/name" in the request Name
//     (controller-runtime requests carry no kind).
//   - The namespace controller deletes content kind by kind with a
//     background-propagation delete-collection, as the real deleter does,
//     but is woken by the deletion of namespaced objects instead of polling
//     (the real one requeues after an estimate of remaining graceful
//     deletion); it does not write the namespace's status conditions
//     (NamespaceDeletionDiscoveryFailure, NamespaceContentRemaining, ...),
//     does not discover resources (it uses the kinds the server serves) and
//     does not model pods' graceful deletion. Tested in namespace_test.go;
//     the fidelity suite's real server runs no controller-manager, so only
//     the apiserver's side (Terminating, 403, finalize) is compared there.
package builtin
