// Package scenario reads scenario files: one JSON file a scenario, at
// scenarios/<project>/<name>.json, saying which controllers run against
// which initial objects, which client actions and perturbations happen
// when, how the explorer searches, and which oracles judge the runs.
//
// Reading is strict and in two stages. [Load] and [Decode] check the shape
// of the file (unknown fields, wrong JSON types, nulls, bad duration
// strings, a perturbation's fields against its type's), read the YAML
// manifests it names and apply the defaults ([DefaultSearch]; scope
// "final" for cel oracles). Package validate (validate.Scenario) then
// checks the rules between fields, compiles every CEL expression with the
// oracle package's environment, and checks controllers and kinds against
// a validate.Known. Every error is an [*Error] (or an [ErrorList] of
// them) naming the file and the JSON path of the field, such as
//
//	scenarios/fluxcd/f1.json: perturbations[0].until: time 2s is not after from's time 5s: the window is empty
//
// This package is a leaf: it imports the standard library, YAML and
// apimachinery's schema package only, so a tool that reads scenario files
// does not build the engine (validation, which needs the oracle, perturb
// and apiserver packages, is package validate's).
//
// The file's JSON Schema (draft 2020-12) is scenario.schema.json beside
// this file, also returned by [Schema]; the tests keep it in step with the
// Go types and check every scenario in the corpus against it.
//
// # Schema v1
//
// A scenario file begins with its schema's version and kind, and names
// every kind as a Kubernetes object names its own, with two fields of the
// object that holds them, apiVersion ("group/version", "v1" for the core
// group) and kind ([TypeRef]: a staleness or watchBreak perturbation, an
// afterWrite or atWriteOf, an apiError's call, a write oracle's select):
//
//	{
//	  "apiVersion": "ctrlbugs.dev/v1",
//	  "kind": "Scenario",
//	  "name": "bucket-stale",
//	  "project": "fluxcd",
//	  "controllers": ["bucket"],
//	  "perturbations": [{"type": "staleness", "controller": "bucket",
//	    "apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "Bucket", "mode": "lag", "lag": "3s",
//	    "from": {"afterWrite": {"controller": "bucket", "apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "Bucket", "n": 2}}, "for": "3s"}],
//	  "oracles": [{"name": "no-panic", "type": "panic"}]
//	}
//
// Files written before v1 have no apiVersion and write a kind as one
// string, "source.toolkit.fluxcd.io/v1/Bucket" ([ParseKind]); [Decode]
// refuses them, naming the command that rewrites them ([Migrate], in
// engine/cmd/scenario-migrate):
//
//	scenarios/fluxcd/x.json: apiVersion: missing: this file predates scenario schema v1; migrate it with: make migrate-scenarios SCENARIO=scenarios/fluxcd/x.json
//
// and, in a v1 file, a kind in the old spelling with its v1 spelling. An
// expression that does not compile is reported with cel-go's text, the
// expression and a caret under the problem on the lines that follow.
//
// # Expressions
//
// Validate checks every CEL expression (a cel oracle's, a write oracle's,
// a trigger's when and a step range's after) in the oracle package's
// environment, and then typed: a call of object or objectsOf whose
// apiVersion and kind are literal strings reads objects of that kind, and
// a write oracle whose select names a kind reads old and new of that kind,
// so the checker gives them the kind's type, built from its OpenAPI v3
// schema as Kubernetes builds the type of a CRD rule's self
// ([oracle.Schemas]: kube's own definitions for a built-in kind, the CRD's
// structural schema for a custom resource, from [Known].CRDs and the CRDs
// among the scenario's objects). A field the kind does not have is an
// error naming it, the kind and its path, with cel-go's caret:
//
//	scenarios/capi/x.json: oracles[0].expr: CEL: ERROR: <input>:1:59: undefined field 'nodeReff': cluster.x-k8s.io/v1beta2 Machine has no field status.nodeReff (did you mean status.nodeRef?)
//	 | objectsOf('cluster.x-k8s.io/v1beta2','Machine').all(m, has(m.status.nodeReff))
//	 | ..........................................................^
//
// metadata is kube's ObjectMeta on every kind; strings of every format are
// strings (timestamp(o.metadata.creationTimestamp)); preserve-unknown-fields
// subtrees, int-or-string, numbers, objects whose schema names no field,
// kinds without a schema here and kinds named by computed strings are dyn.
// Types only check: evaluation is untyped, as before.
//
// Selecting an absent field is an evaluation error, not false. An optional
// field is guarded at each level with has, or selected optionally (kube's
// environment has CEL's optional types) with a default:
//
//	has(o.status) && has(o.status.observedGeneration) && o.status.observedGeneration == o.metadata.generation
//	o.?status.?observedGeneration.orValue(-1) == o.metadata.generation
//
// An .all over objects of a kind (objectsOf(...), filtered, mapped, or a
// cel.bind name for one) is true when there are none. In a final-state
// oracle or a trigger that never sizes the list (size, == []), Validate
// warns ([Scenario.Warnings], oracle.UnguardedAll): a guard says what is
// meant, objectsOf(...).size() == 3 && objectsOf(...).all(...), or
// objectsOf(...).size() == 0 || ... where none is fine. An always-scope
// oracle's .all is an invariant that holds when there is nothing to hold
// of, and is not warned of.
//
// # Actions
//
// An action's at is one trigger: a step, a virtual time, a CEL condition
// (when, with the oracle package's functions, served(apiVersion, kind)
// among them: "kind K is served"), a controller's Nth write, or a step
// range the search explores. A condition may be delayed: the action fires
// that long after the first state in which the condition held:
//
//	{"name": "scale-down", "op": "patch", ...,
//	 "at": {"when": "served('example.org/v1', 'Widget')", "after": "5s"}}
//
// Several actions with steps are explored jointly: one variant per
// combination of their steps (at most 1000), named by their moments,
// "delete-a@3,delete-b@5" (one action alone: "action delete-a at step 3").
// Ranges that overlap cover both relative orders; at the same step,
// actions apply in the scenario's order:
//
//	{"name": "delete-a", "op": "delete", ..., "at": {"steps": {"from": 3, "to": 6}}},
//	{"name": "delete-b", "op": "delete", ..., "at": {"steps": {"from": 3, "to": 6}}}
//
// A range's steps are absolute unless it has an anchor, after: a CEL
// condition; from and to then count steps from the first state in which it
// holds (0: that state), and the variants are named "action x at step
// anchor+k" ("x@anchor+k"). An anchored range keeps its meaning when the
// steps before the anchor move (a bump, an engine change):
//
//	"at": {"steps": {"from": 0, "to": 40, "after": "exists('karpenter.sh/v1', 'NodeClaim', '', 'a')"}}
//
// An afterWrite trigger (an action's, or a window's from or until) fires
// after the n-th write (1-based) that matches every field set: controller
// (the process as the scenario lists it: all its controllers' writes
// count; "user": the scenario's own actions), apiVersion and kind (group
// and kind, the version not compared), verb ("status": any write to the status
// subresource) and subresource ("status": writes to the status subresource
// only; with a verb, that verb's). Writes are counted in the order they
// were made: a controller's when the API server accepted it (a no-op write
// too; a refused one not), a user action's when it stored something; the
// initial objects never count, and a controller's count never includes
// the user's writes. The 2nd status patch of the process capi:
//
//	"at": {"afterWrite": {"controller": "capi", "verb": "patch", "subresource": "status", "n": 2}}
//
// A when sees elapsed (also time): the virtual time since the run
// started, a duration, as "always" oracles do. It is evaluated with the
// state, between steps, and does not wake a run that has nothing else to
// do: elapsed >= duration('20s') fires at the first state after 20s (for
// a moment, use time). Each run, and so each variant of a search, counts
// it from its own start; the bubble's absolute clock does not restart
// between variants.
//
// An action may repeat: repeat {count, every} fires it count times in all
// (count >= 2), the first when its trigger fires and the k-th repetition
// every×k after that instant (a time trigger's time, a delayed
// condition's end of delay, otherwise the moment the action applied). Each
// firing is its own action in the trace, named "<name>#2", "<name>#3", …
// ("actions[i]#2" for an unnamed one); dropping the action (a finding's
// control run) drops its repetitions. A repetition that does not fire
// (past the horizon, or the run went quiescent first) makes the run's
// verdicts errors naming "actions[i].repeat", as any action that did not
// happen; this one marks the ConfigMap at t=10s, 20s and 30s:
//
//	{"name": "mark", "op": "patch", ..., "at": {"time": "10s"},
//	 "repeat": {"count": 3, "every": "10s"}}
//
// An action that does not happen as written is never silent. In a run
// where it never fired (its step after the run went quiescent, its time
// after the horizon, its condition never held) or the server refused it
// (NotFound, Conflict, any API error), every verdict is an error naming
// it ("action delete-b (actions[1], at step 3) failed at step 3 (t=0s):
// NotFound: ..."): the run did not follow its scenario, so it is neither a
// pass nor a failure of the system's oracles (as for a `when` that cannot
// be evaluated). The trace notes it and keeps it in its records. An
// action that fires in none of a scenario's runs is an error of the
// scenario, naming the file and the field:
//
//	scenarios/capi/x.json: actions[1]: action delete-b (at step 500) never fired in any of 1 run(s): ...
//
// # The cluster and its processes
//
// server {version} names the simulated kube-apiserver release ("1.33");
// absent, the project's default. It decides how an informer's first list
// is served: a consistent watch-list where the release serves one (its own
// WatchList gate: 1.32, 1.34 and later), elsewhere a LIST at
// resourceVersion=0 that a lagging view makes stale. reconcileDuration
// gives a controller's reconciles virtual time ("100ms", "50ms..200ms"),
// per process or per controller of a process ("karpenter/disruption").
// featureGates sets upstream feature gates per process
// ({"karpenter": {"NodeRepair": true}}), among those its harness declares
// (explore.Controller.KnownGates, upstream's list); the process reads them
// from its context (explore.GatesFrom) and its harness passes them as
// upstream's main parses them.
// A crash of a process whose harness declares leader election names its
// successor ("restarted", the default, or "standby") and may be graceful
// (the lease is released where upstream releases it); atWriteOf places a
// crash at the n-th of its controller's writes of a kind, verb or
// subresource, or (explore) only at those.
//
// # Fidelity and limits
//
//   - Field names match case-sensitively (encoding/json alone would accept
//     "Name" for "name"); null is rejected everywhere except inside objects
//     and patches, where Kubernetes gives it meaning.
//   - A duplicated key in one JSON object is not reported: the last value
//     wins, as in encoding/json.
//   - Objects are checked for apiVersion, kind, metadata.name and a string
//     metadata.namespace only; their other fields reach the engine as
//     written. Numbers in objects become int64 when integral, else
//     float64, as in unstructured.Unstructured.
//   - Manifest documents that are empty are skipped; a List document is
//     not expanded into its items.
//   - A replay trace's path is not checked for existence; resolve it with
//     [Scenario.ResolvePath].
//   - "seed": 0 cannot be asked for: zero means the default seed, 1.
//   - validate.Known with a nil slice skips that check, so a scenario can be
//     validated without the engine's registry; without Known.CRDs, custom
//     resources other than the scenario's own CRDs' are dyn.
package scenario
