// Package scenario reads scenario files: one JSON file a scenario, at
// scenarios/<project>/<name>.json, saying which controllers run against
// which initial objects, which client actions and perturbations happen
// when, how the explorer searches, and which oracles judge the runs.
//
// Reading is strict and in two stages. [Load] and [Decode] check the shape
// of the file (unknown fields, wrong JSON types, nulls, bad duration
// strings), read the YAML manifests it names and apply the defaults
// ([DefaultSearch]; scope "final" for cel oracles). [Scenario.Validate]
// then checks the rules between fields, compiles every CEL expression with
// the oracle package's environment, and checks controllers and kinds
// against a [Known]. Every error is an [*Error] (or an [ErrorList] of
// them) naming the file and the JSON path of the field, such as
//
//	scenarios/fluxcd/f1.json: perturbations[0].until: time 2s is not after from's time 5s: the window is empty
//
// The file's JSON Schema (draft 2020-12) is scenario.schema.json beside
// this file, also returned by [Schema]; the tests keep it in step with the
// Go types and check every scenario in the corpus against it.
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
//   - Known with a nil slice skips that check, so a scenario can be
//     validated without the engine's registry.
package scenario
