// Package engine is the ctrlbugs exploration engine: it runs real, unmodified
// Kubernetes controllers against a simulated, faithful API server on virtual
// time, perturbs what they see, and judges the outcome with oracles.
//
// The packages, each importing only those listed before it:
//
//	store      versioned objects, revisions, the event log
//	apiserver  kube-apiserver request semantics over store
//	ctrlsim    the controller-runtime surface upstream code calls (client,
//	           cache, manager), recording every call at the boundary
//	builtin    Kubernetes' own controllers (the garbage collector)
//	explore    the state machine: queues, timers, views, steps, search modes
//	oracle     verdicts over recorded states (CEL, divergence, ...)
//	scenario   strict decoding of scenario files
//	trace      the JSONL trace schema and its renderers
//	enginetest the go test face: runs inside testing/synctest bubbles
package engine
