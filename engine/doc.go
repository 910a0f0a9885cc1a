// Package engine is the ctrlbugs exploration engine: it runs real, unmodified
// Kubernetes controllers against a simulated, faithful API server on virtual
// time, perturbs what they see, and judges the outcome with oracles.
//
// The packages, each importing (of these) only packages listed before it:
//
//	verb          the API calls' verbs as records name them
//	store         versioned objects, revisions, the event log
//	apiserver     kube-apiserver request semantics over store
//	ctrlsim       the controller-runtime surface upstream code calls (client,
//	              cache, manager), recording every call at the boundary
//	builtin       Kubernetes' own controllers (the garbage collector)
//	oracle        verdicts over recorded states (CEL, divergence, ...)
//	trace         the JSONL trace schema and its renderers
//	serverversion which modelled behaviours depend on the server release
//	explore       the state machine: queues, timers, views, steps, search modes
//	perturb       the faults the engine injects, behind explore's interface
//	scenario      strict decoding of scenario files
//	engine        this package: compiles a scenario and runs it (Run)
//	finding       finding write-ups, their index, their verdict lines
//	digest        the committed digests of the explorations' verdicts
//	inspect       a recorded run's cluster served to kubectl
//	enginetest    the go test face: runs inside testing/synctest bubbles
//
// (internal/ holds helpers any of them may import; cmd/ the tools.)
package engine
