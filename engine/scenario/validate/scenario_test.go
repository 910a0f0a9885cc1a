package validate

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ctrlbugs/corpus/engine/scenario"
)

// baseScenario is valid; each malformed case changes one thing.
const baseScenario = `{
  "apiVersion": "ctrlbugs.dev/v1",
  "kind": "Scenario",
  "name": "bucket-stale",
  "description": "base of the malformed cases",
  "project": "fluxcd",
  "controllers": ["source-controller", "kustomize-controller"],
  "objects": [
    {"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "Bucket",
     "metadata": {"name": "podinfo", "namespace": "default"}, "spec": {"interval": "1m", "bucketName": "podinfo"}}
  ],
  "actions": [
    {"name": "bump", "at": {"step": 3}, "op": "patch",
     "object": {"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "Bucket", "metadata": {"name": "podinfo", "namespace": "default"}},
     "patchType": "merge", "patch": {"spec": {"bucketName": "other"}}}
  ],
  "perturbations": [
    {"type": "staleness", "controller": "source-controller", "apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "Bucket",
     "mode": "lag", "lag": "2s", "from": {"time": "1s"}, "until": {"time": "5s"}}
  ],
  "search": {"mode": "dfs", "maxStates": 100},
  "oracles": [
    {"name": "observed", "type": "cel", "expr": "exists('source.toolkit.fluxcd.io/v1','Bucket','default','podinfo')"},
    {"name": "no-panic", "type": "panic"}
  ],
  "ablations": ["noopWrites"]
}`

const testFile = "scenarios/fluxcd/base.json"

func decodeBase(t *testing.T, mut func(*testing.T, map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(baseScenario), &m); err != nil {
		t.Fatal(err)
	}
	if mut != nil {
		mut(t, m)
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestBaseScenarioIsValid(t *testing.T) {
	s, err := scenario.Decode(testFile, decodeBase(t, nil), "testdata")
	if err != nil {
		t.Fatal(err)
	}
	if err := Scenario(s, known); err != nil {
		t.Fatal(err)
	}
}

// malformedCase is a scenario with one thing wrong.
type malformedCase struct {
	name  string
	mut   func(*testing.T, map[string]any) // applied to baseScenario
	raw   string                           // replaces the document when set
	known *Known                           // defaults to known
	field string                           // the JSON path the error must name
	msg   string                           // a substring of its message
	// schema: the JSON Schema rejects the document too (checked by
	// TestSchemaRejectsMalformed).
	schema bool
}

// data returns the case's document.
func (tt malformedCase) data(t *testing.T) []byte {
	if tt.raw != "" {
		return []byte(tt.raw)
	}
	return decodeBase(t, tt.mut)
}

func malformedCases() []malformedCase {
	bucketRef := map[string]any{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "Bucket", "metadata": map[string]any{"name": "podinfo", "namespace": "default"}}
	return []malformedCase{
		// Shape: unknown fields, types, nulls, syntax.
		{name: "unknown top-level field", mut: set("bogus", 1), field: "bogus", msg: "unknown field", schema: true},
		{name: "field in the wrong case", mut: set("Controllers", []any{"x"}), field: "Controllers", msg: `did you mean "controllers"`, schema: true},
		{name: "unknown field in a perturbation", mut: set("perturbations[0].window", parse(`{"until": {"time": "3s"}}`)), field: "perturbations[0].window", msg: "unknown field", schema: true},
		{name: "unknown field in a trigger", mut: set("perturbations[0].until.at", "3s"), field: "perturbations[0].until.at", msg: "unknown field", schema: true},
		{name: "unknown field in an action", mut: set("actions[0].when", "now"), field: "actions[0].when", msg: "unknown field", schema: true},
		{name: "unknown field in an oracle", mut: set("oracles[1].expect", "fails"), field: "oracles[1].expect", msg: "unknown field", schema: true},
		{name: "unknown field in search", mut: set("search.depth", 3), field: "search.depth", msg: "unknown field", schema: true},
		{name: "unknown field in afterWrite", mut: set("actions[0].at", parse(`{"afterWrite": {"controller": "source-controller", "n": 1, "nth": 2}}`)), field: "actions[0].at.afterWrite.nth", msg: "unknown field", schema: true},
		{name: "wrong type: name", mut: set("name", 5), field: "name", msg: "want string, got number 5", schema: true},
		{name: "wrong type: nested integer", mut: set("search.maxSteps", "many"), field: "search.maxSteps", msg: "want integer, got string", schema: true},
		{name: "wrong type: fractional integer", mut: set("search.maxSteps", 1.5), field: "search.maxSteps", msg: "want integer, got 1.5", schema: true},
		{name: "wrong type: array", mut: set("controllers", "source-controller"), field: "controllers", msg: "want array, got string", schema: true},
		{name: "wrong type: boolean", mut: set("perturbations[0].explore", "yes"), field: "perturbations[0].explore", msg: "want boolean", schema: true},
		{name: "wrong type: object", mut: set("objects[0]", "Bucket"), field: "objects[0]", msg: "want object, got string", schema: true},
		{name: "wrong type: duration", mut: set("perturbations[0].lag", 2), field: "perturbations[0].lag", msg: "want a duration string", schema: true},
		{name: "null field", mut: set("description", nil), field: "description", msg: "null is not allowed", schema: true},
		{name: "invalid JSON", raw: "{\n  \"name\": \"x\",\n  oops\n}", field: "", msg: "invalid JSON at line 3, column 3"},
		{name: "truncated JSON", raw: `{"name": "x"`, field: "", msg: "unexpected end"},
		{name: "trailing data", raw: `{"name": "x"} {}`, field: "", msg: "trailing data after the scenario object at line 1, column 15"},
		{name: "not an object", raw: `["name"]`, field: "", msg: "want a JSON object, got array"},

		// The schema's version and kind.
		{name: "file before schema v1", mut: all(del("apiVersion"), del("kind")), field: "apiVersion", msg: "missing: this file predates scenario schema v1; migrate it with: make migrate-scenarios SCENARIO=" + testFile, schema: true},
		{name: "unknown schema version", mut: set("apiVersion", "ctrlbugs.dev/v2"), field: "apiVersion", msg: `unknown scenario schema version "ctrlbugs.dev/v2": the supported apiVersion is "ctrlbugs.dev/v1"`, schema: true},
		{name: "schema version not a string", mut: set("apiVersion", 1), field: "apiVersion", msg: `unknown scenario schema version number 1`, schema: true},
		{name: "missing scenario kind", mut: del("kind"), field: "kind", msg: `missing: want "Scenario"`, schema: true},
		{name: "another kind", mut: set("kind", "Finding"), field: "kind", msg: `"Finding": want "Scenario"`, schema: true},

		// Kinds: apiVersion and kind; the single string of before v1 is
		// refused with its v1 spelling.
		{name: "perturbation kind in the old spelling", mut: all(del("perturbations[0].apiVersion"), set("perturbations[0].kind", "source.toolkit.fluxcd.io/v1/Bucket")), field: "perturbations[0].kind",
			msg: `"source.toolkit.fluxcd.io/v1/Bucket" is the single-string spelling of scenarios before schema v1; v1 writes "apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "Bucket"`, schema: true},
		{name: "afterWrite kind in the old spelling", mut: set("actions[0].at", parse(`{"afterWrite": {"controller": "source-controller", "kind": "v1/Secret", "n": 1}}`)), field: "actions[0].at.afterWrite.kind", msg: `v1 writes "apiVersion": "v1", "kind": "Secret"`, schema: true},
		{name: "select kind in the old spelling", mut: all(set("oracles[1].type", "write"), set("oracles[1].expr", "true"), set("oracles[1].select", parse(`{"kind": "apps/v1/Deployment"}`))), field: "oracles[1].select.kind", msg: `v1 writes "apiVersion": "apps/v1", "kind": "Deployment"`, schema: true},
		{name: "call kind in the old spelling", mut: set("perturbations[0]", parse(`{"type": "apiError", "controller": "source-controller", "code": 500, "call": {"kind": "v1/Secret"}}`)), field: "perturbations[0].call.kind", msg: `v1 writes "apiVersion": "v1", "kind": "Secret"`, schema: true},
		{name: "old spelling beside an apiVersion", mut: set("perturbations[0].kind", "v1/Secret"), field: "perturbations[0].kind", msg: `v1 writes "apiVersion": "v1", "kind": "Secret"`, schema: true},
		{name: "kind without apiVersion", mut: del("perturbations[0].apiVersion"), field: "perturbations[0].apiVersion", msg: "required with kind", schema: true},
		{name: "apiVersion without kind", mut: set("actions[0].at", parse(`{"afterWrite": {"controller": "source-controller", "apiVersion": "v1", "n": 1}}`)), field: "actions[0].at.afterWrite.kind", msg: "required with apiVersion", schema: true},
		{name: "bad apiVersion of a kind", mut: set("perturbations[0].apiVersion", "Source/V1"), field: "perturbations[0].apiVersion", msg: `bad apiVersion "Source/V1"`, schema: true},
		{name: "kind of another version", mut: set("perturbations[0].apiVersion", "source.toolkit.fluxcd.io/v1beta2"), field: "perturbations[0].kind", msg: `the scenario serves no kind source.toolkit.fluxcd.io/v1beta2 Bucket; did you mean "apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "Bucket"?`},
		{name: "apiVersion on a crash", mut: set("perturbations[0]", parse(`{"type": "crash", "controller": "source-controller", "atWrite": 1, "apiVersion": "v1"}`)), field: "perturbations[0].apiVersion", msg: "not for type crash", schema: true},

		// Top level.
		{name: "missing name", mut: del("name"), field: "name", msg: "required", schema: true},
		{name: "bad name characters", mut: set("name", "Bucket_Stale"), field: "name", msg: "lower-case letters", schema: true},
		{name: "missing project", mut: del("project"), field: "project", msg: "required", schema: true},
		{name: "another project's scenario", known: &Known{Project: "crossplane", Controllers: known.Controllers, Kinds: known.Kinds}, mut: nil, field: "project", msg: `scenario is for project "fluxcd", but it is run by project "crossplane"`},
		{name: "empty controllers", mut: set("controllers", []any{}), field: "controllers", msg: "at least one controller", schema: true},
		{name: "duplicate controller", mut: set("controllers", []any{"source-controller", "source-controller"}), field: "controllers[1]", msg: "duplicate controller", schema: true},
		{name: "unknown controller", mut: set("controllers[1]", "flux-operator"), field: "controllers[1]", msg: `unknown controller "flux-operator"`},
		{name: "unknown ablation", mut: set("ablations", []any{"caching"}), field: "ablations[0]", msg: `unknown ablation "caching"`, schema: true},
		{name: "duplicate ablation", mut: set("ablations", []any{"generation", "generation"}), field: "ablations[1]", msg: "duplicate ablation", schema: true},

		// Objects.
		{name: "object without kind", mut: del("objects[0].kind"), field: "objects[0].kind", msg: "required", schema: true},
		{name: "object without apiVersion", mut: del("objects[0].apiVersion"), field: "objects[0].apiVersion", msg: "required", schema: true},
		{name: "object without name", mut: del("objects[0].metadata.name"), field: "objects[0].metadata.name", msg: "required", schema: true},
		{name: "object without metadata", mut: del("objects[0].metadata"), field: "objects[0].metadata", msg: "required, with a name", schema: true},
		{name: "object with a numeric namespace", mut: set("objects[0].metadata.namespace", 3), field: "objects[0].metadata.namespace", msg: "want string", schema: true},
		{name: "unknown kind", mut: set("objects[0].kind", "Bukket"), field: "objects[0].kind", msg: "unknown kind source.toolkit.fluxcd.io/v1/Bukket"},
		{name: "bad apiVersion", mut: set("objects[0].apiVersion", "a/b/c"), field: "objects[0].apiVersion", msg: "bad apiVersion"},
		{
			name: "duplicate object",
			mut: func(t *testing.T, m map[string]any) {
				m["objects"] = append(m["objects"].([]any), parse(`{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "Bucket", "metadata": {"name": "podinfo", "namespace": "default"}}`))
			},
			field: "objects[1]", msg: "duplicate object source.toolkit.fluxcd.io/v1/Bucket default/podinfo (also at objects[0])",
		},

		// Actions.
		{name: "action with two triggers", mut: set("actions[0].at.time", "1s"), field: "actions[0].at", msg: "step and time are set", schema: true},
		{name: "action with no trigger", mut: set("actions[0].at", map[string]any{}), field: "actions[0].at", msg: "none is set", schema: true},
		{name: "action without at", mut: del("actions[0].at"), field: "actions[0].at", msg: "none is set", schema: true},
		{name: "negative step", mut: set("actions[0].at.step", -1), field: "actions[0].at.step", msg: "must not be negative", schema: true},
		{name: "patch op without patchType", mut: del("actions[0].patchType"), field: "actions[0].patchType", msg: "required with op patch", schema: true},
		{name: "patch op without patch", mut: del("actions[0].patch"), field: "actions[0].patch", msg: "required with op patch", schema: true},
		{name: "patchType on a non-patch op", mut: all(set("actions[0].op", "delete"), del("actions[0].patch")), field: "actions[0].patchType", msg: `only with op patch, not "delete"`, schema: true},
		{name: "patch on a non-patch op", mut: all(set("actions[0].op", "update"), del("actions[0].patchType")), field: "actions[0].patch", msg: "only with op patch", schema: true},
		{name: "unknown op", mut: set("actions[0].op", "replace"), field: "actions[0].op", msg: `unknown op "replace"`, schema: true},
		{name: "unknown patchType", mut: set("actions[0].patchType", "apply"), field: "actions[0].patchType", msg: `unknown patchType "apply"`, schema: true},
		{name: "json patch that is not a list", mut: set("actions[0].patchType", "json"), field: "actions[0].patch", msg: "array of operations", schema: true},
		{name: "action object without kind", mut: del("actions[0].object.kind"), field: "actions[0].object.kind", msg: "required", schema: true},
		{name: "action object of unknown kind", mut: set("actions[0].object.kind", "Gitrepo"), field: "actions[0].object.kind", msg: "unknown kind"},
		{name: "afterWrite of an unlisted controller", mut: set("actions[0].at", parse(`{"afterWrite": {"controller": "helm-controller", "n": 1}}`)), field: "actions[0].at.afterWrite.controller", msg: "not among the scenario's controllers"},
		{name: "afterWrite n 0", mut: set("actions[0].at", parse(`{"afterWrite": {"controller": "source-controller", "n": 0}}`)), field: "actions[0].at.afterWrite.n", msg: "at least 1", schema: true},
		{name: "afterWrite unknown subresource", mut: set("actions[0].at", parse(`{"afterWrite": {"controller": "source-controller", "subresource": "scale", "n": 1}}`)), field: "actions[0].at.afterWrite.subresource", msg: `the only subresource is "status"`, schema: true},
		{name: "repeat count 1", mut: set("actions[0].repeat", parse(`{"count": 1, "every": "5s"}`)), field: "actions[0].repeat.count", msg: "at least 2", schema: true},
		{name: "repeat every 0", mut: set("actions[0].repeat", parse(`{"count": 2, "every": "0s"}`)), field: "actions[0].repeat.every", msg: "must be positive"},
		{name: "repeat without every", mut: set("actions[0].repeat", parse(`{"count": 2}`)), field: "actions[0].repeat.every", msg: "required", schema: true},
		{name: "afterWrite unknown verb", mut: set("actions[0].at", parse(`{"afterWrite": {"controller": "source-controller", "verb": "get", "n": 1}}`)), field: "actions[0].at.afterWrite.verb", msg: `unknown verb "get"`, schema: true},
		{name: "afterWrite unknown kind", mut: set("actions[0].at", parse(`{"afterWrite": {"controller": "source-controller", "apiVersion": "v1", "kind": "Pod", "n": 1}}`)), field: "actions[0].at.afterWrite.kind", msg: "unknown kind: the scenario serves no kind v1 Pod"},
		{name: "when that does not compile", mut: set("actions[0].at", parse(`{"when": "exists('v1','ConfigMap')"}`)), field: "actions[0].at.when", msg: "CEL: ERROR: <input>:1:7: found no matching overload"},
		{name: "after without when", mut: set("actions[0].at.after", "5s"), field: "actions[0].at.after", msg: "only with when", schema: true},
		{name: "after that is not positive", mut: set("actions[0].at", parse(`{"when": "step > 2", "after": "0s"}`)), field: "actions[0].at.after", msg: "0s: must be positive"},
		{name: "after with two triggers", mut: set("actions[0].at", parse(`{"when": "step > 2", "after": "1s", "time": "3s"}`)), field: "actions[0].at", msg: "time and when are set", schema: true},
		{name: "joint moments over 1000 variants", mut: func(t *testing.T, m map[string]any) {
			set("actions[0].at", parse(`{"steps": {"from": 1, "to": 40}}`))(t, m)
			m["actions"] = append(m["actions"].([]any), map[string]any{"name": "drop", "at": map[string]any{"steps": map[string]any{"from": 1, "to": 30}}, "op": "delete", "object": bucketRef})
		}, field: "actions[1].at.steps", msg: "make 1200 variants or more (the product of their ranges): at most 1000"},
		{name: "served in a final oracle", mut: set("oracles[0].expr", "served('v1', 'ConfigMap')"), field: "oracles[0].expr", msg: "served(...) is for `when` triggers and always-scope oracles"},
		{name: "duplicate action name", mut: func(t *testing.T, m map[string]any) {
			m["actions"] = append(m["actions"].([]any), map[string]any{"name": "bump", "at": map[string]any{"step": 5}, "op": "delete", "object": bucketRef})
		}, field: "actions[1].name", msg: `duplicate action name "bump"`},

		// Perturbations.
		{name: "bad duration string", mut: set("perturbations[0].lag", "2 seconds"), field: "perturbations[0].lag", msg: `bad duration "2 seconds"`, schema: true},
		{name: "bad duration in a trigger", mut: set("perturbations[0].from.time", "soon"), field: "perturbations[0].from.time", msg: `bad duration "soon"`, schema: true},
		{name: "negative lag", mut: set("perturbations[0].lag", "-2s"), field: "perturbations[0].lag", msg: "-2s: must be positive"},
		{name: "lag missing in mode lag", mut: del("perturbations[0].lag"), field: "perturbations[0].lag", msg: "required with mode lag", schema: true},
		{
			name:  "staleAt not before catchUpAt",
			mut:   set("perturbations[0]", parse(`{"type": "staleness", "controller": "source-controller", "apiVersion": "v1", "kind": "Secret", "mode": "writes", "staleAt": 3, "catchUpAt": 3}`)),
			field: "perturbations[0].catchUpAt", msg: "3: must be after staleAt (3)",
		},
		{
			name:  "mode writes without kind",
			mut:   set("perturbations[0]", parse(`{"type": "staleness", "controller": "source-controller", "mode": "writes", "staleAt": 0, "catchUpAt": 3}`)),
			field: "perturbations[0].kind", msg: "required: the kind whose cache is stale", schema: true,
		},
		{
			name:  "mode writes with a window",
			mut:   set("perturbations[0]", parse(`{"type": "staleness", "controller": "source-controller", "apiVersion": "v1", "kind": "Secret", "mode": "writes", "staleAt": 0, "catchUpAt": 3, "from": {"step": 1}}`)),
			field: "perturbations[0].from", msg: "not with mode writes", schema: true,
		},
		{
			name:  "apiError with a code kube does not send here",
			mut:   set("perturbations[0]", parse(`{"type": "apiError", "controller": "source-controller", "code": 418}`)),
			field: "perturbations[0].code", msg: "418: one of 429 (too many requests), 500, 503, 504 (timeout)", schema: true,
		},
		{
			name:  "apiError without a code",
			mut:   set("perturbations[0]", parse(`{"type": "apiError", "controller": "source-controller", "call": {"verb": "get"}}`)),
			field: "perturbations[0].code", msg: "required: the HTTP status", schema: true,
		},
		{
			name:  "apiError Retry-After not in seconds",
			mut:   set("perturbations[0]", parse(`{"type": "apiError", "controller": "source-controller", "code": 429, "retryAfter": "500ms"}`)),
			field: "perturbations[0].retryAfter", msg: "500ms: whole seconds, at least 1s",
		},
		{
			name:  "apiError on an unknown verb",
			mut:   set("perturbations[0]", parse(`{"type": "apiError", "controller": "source-controller", "code": 500, "call": {"verb": "watch"}}`)),
			field: "perturbations[0].call.verb", msg: `unknown verb "watch"`, schema: true,
		},
		{
			name:  "apiError count with repeat",
			mut:   set("perturbations[0]", parse(`{"type": "apiError", "controller": "source-controller", "code": 500, "count": 2, "repeat": true}`)),
			field: "perturbations[0].count", msg: "not with repeat",
		},
		{
			name:  "apiError on an unknown kind",
			mut:   set("perturbations[0]", parse(`{"type": "apiError", "controller": "source-controller", "code": 500, "call": {"apiVersion": "v1", "kind": "Nope"}}`)),
			field: "perturbations[0].call.kind", msg: "the scenario serves no kind v1 Nope",
		},
		{name: "window until before from", mut: set("perturbations[0].until.time", "500ms"), field: "perturbations[0].until", msg: "time 500ms is not after from's time 1s"},
		{name: "window until equal to from in steps", mut: all(set("perturbations[0].from", parse(`{"step": 4}`)), set("perturbations[0].until", parse(`{"step": 4}`))), field: "perturbations[0].until", msg: "step 4 is not after from's step 4"},
		{name: "window with until and for", mut: set("perturbations[0].for", "3s"), field: "perturbations[0].for", msg: "not with until", schema: true},
		{name: "window with zero for", mut: all(del("perturbations[0].until"), set("perturbations[0].for", "0s")), field: "perturbations[0].for", msg: "must be positive"},
		{name: "window trigger that does not compile", mut: set("perturbations[0].from", parse(`{"when": "object("}`)), field: "perturbations[0].from.when", msg: "Syntax error"},
		{name: "window trigger with a non-bool expression", mut: set("perturbations[0].from", parse(`{"when": "step + 1"}`)), field: "perturbations[0].from.when", msg: "want bool"},
		{name: "crash with atWrite 0", mut: set("perturbations[0]", parse(`{"type": "crash", "controller": "source-controller", "atWrite": 0}`)), field: "perturbations[0].atWrite", msg: "crash needs atWrite >= 1", schema: true},
		{name: "crash without atWrite", mut: set("perturbations[0]", parse(`{"type": "crash", "controller": "source-controller"}`)), field: "perturbations[0].atWrite", msg: "crash needs atWrite >= 1", schema: true},
		{name: "ordering with no controller", mut: set("perturbations[0]", parse(`{"type": "ordering", "controllers": []}`)), field: "perturbations[0].controllers", msg: "at least one controller", schema: true},
		{name: "ordering with controller", mut: set("perturbations[0]", parse(`{"type": "ordering", "controller": "source-controller", "controllers": ["source-controller", "kustomize-controller"]}`)), field: "perturbations[0].controller", msg: "not for type ordering", schema: true},
		{name: "staleness without kind", mut: all(del("perturbations[0].apiVersion"), del("perturbations[0].kind")), field: "perturbations[0].kind", msg: "required: the kind whose cache is stale", schema: true},
		{name: "watchBreak without kind", mut: set("perturbations[0]", parse(`{"type": "watchBreak", "controller": "source-controller"}`)), field: "perturbations[0].kind", msg: "required: the kind whose watch breaks", schema: true},
		{name: "dropEvents retired", mut: set("perturbations[0]", parse(`{"type": "dropEvents", "controller": "source-controller", "apiVersion": "v1", "kind": "Secret"}`)), field: "perturbations[0].type", msg: `"dropEvents" is no longer a perturbation`, schema: true},
		{name: "explored staleness with from", mut: all(set("perturbations[0].explore", true), set("perturbations[0].from", parse(`{"step": 1}`))), field: "perturbations[0].from", msg: "not with explore", schema: true},
		{name: "explored crash with atWrite", mut: set("perturbations[0]", parse(`{"type": "crash", "controller": "source-controller", "atWrite": 2, "explore": true}`)), field: "perturbations[0].atWrite", msg: "not with explore", schema: true},
		{name: "explored moment of a window", mut: set("perturbations[0].from", parse(`{"steps": {"from": 1, "to": 3}}`)), field: "perturbations[0].from.steps", msg: "only an action's moment can be explored"},
		{name: "explored moment anchored by bad CEL", mut: set("actions[0].at", parse(`{"steps": {"from": 0, "to": 3, "after": "exists("}}`)), field: "actions[0].at.steps.after", msg: "CEL: "},
		{name: "explored moment backwards", mut: set("actions[0].at", parse(`{"steps": {"from": 3, "to": 1}}`)), field: "actions[0].at.steps.to", msg: "must not be before from"},
		{name: "explored moment and explored perturbation", mut: all(set("actions[0].at", parse(`{"steps": {"from": 1, "to": 3}}`)), set("perturbations[0].explore", true), del("perturbations[0].from")), field: "perturbations[0].explore", msg: "explores one thing at a time"},
		{name: "two explored perturbations", mut: set("perturbations", parse(`[{"type": "crash", "controller": "source-controller", "explore": true}, {"type": "crash", "controller": "source-controller", "explore": true}]`)), field: "perturbations[1].explore", msg: "only one perturbation may"},
		{name: "ordering of an unlisted controller", mut: set("perturbations[0]", parse(`{"type": "ordering", "controllers": ["source-controller", "helm-controller"]}`)), field: "perturbations[0].controllers[1]", msg: "not among the scenario's controllers"},
		{name: "unknown perturbation type", mut: set("perturbations[0].type", "chaos"), field: "perturbations[0].type", msg: `unknown perturbation type "chaos"`, schema: true},
		{name: "staleness without mode", mut: all(del("perturbations[0].mode"), del("perturbations[0].lag")), field: "perturbations[0].mode", msg: "required for staleness", schema: true},
		{name: "unknown staleness mode", mut: set("perturbations[0].mode", "slow"), field: "perturbations[0].mode", msg: `unknown staleness mode "slow"`, schema: true},
		{name: "perturbation without controller", mut: del("perturbations[0].controller"), field: "perturbations[0].controller", msg: "required", schema: true},
		{name: "perturbation of an unlisted controller", mut: set("perturbations[0].controller", "helm-controller"), field: "perturbations[0].controller", msg: "not among the scenario's controllers"},
		{name: "perturbation kind malformed", mut: set("perturbations[0].kind", "bucket"), field: "perturbations[0].kind", msg: `want a kind's name, such as "Deployment", beside its apiVersion`, schema: true},
		{name: "perturbation kind without its group", mut: set("perturbations[0].apiVersion", "v1"), field: "perturbations[0].kind", msg: `unknown kind: the scenario serves no kind v1 Bucket; did you mean "apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "Bucket"?`},
		{name: "perturbation kind unknown", mut: all(set("perturbations[0].apiVersion", "apps/v1"), set("perturbations[0].kind", "Deployment")), field: "perturbations[0].kind", msg: "unknown kind: the scenario serves no kind apps/v1 Deployment"},
		{name: "explore on watchBreak", mut: set("perturbations[0]", parse(`{"type": "watchBreak", "controller": "source-controller", "explore": true}`)), field: "perturbations[0].explore", msg: "not for type watchBreak", schema: true},
		{name: "repeat on staleness", mut: set("perturbations[0].repeat", true), field: "perturbations[0].repeat", msg: "not for type staleness", schema: true},

		// Search.
		{name: "unknown search mode", mut: set("search.mode", "bfs"), field: "search.mode", msg: `unknown search mode "bfs"`, schema: true},
		{name: "replay without trace", mut: set("search.mode", "replay"), field: "search.trace", msg: "required with mode replay", schema: true},
		{name: "trace without replay", mut: set("search.trace", "t.json"), field: "search.trace", msg: `only with mode replay, not "dfs"`, schema: true},
		{name: "negative maxSteps", mut: set("search.maxSteps", -5), field: "search.maxSteps", msg: "-5: must be at least 1", schema: true},
		{name: "negative horizon", mut: set("search.horizon", "-1h"), field: "search.horizon", msg: "must be positive"},

		// Oracles.
		{name: "no oracles", mut: set("oracles", []any{}), field: "oracles", msg: "at least one oracle", schema: true},
		{name: "oracle without name", mut: del("oracles[0].name"), field: "oracles[0].name", msg: "required", schema: true},
		{name: "duplicate oracle name", mut: set("oracles[1].name", "observed"), field: "oracles[1].name", msg: `duplicate oracle name "observed"`},
		{name: "unknown oracle type", mut: set("oracles[1].type", "deadlock"), field: "oracles[1].type", msg: `unknown oracle type "deadlock"`, schema: true},
		{name: "cel oracle with empty expr", mut: set("oracles[0].expr", ""), field: "oracles[0].expr", msg: "required for type cel", schema: true},
		{name: "cel oracle that does not compile", mut: set("oracles[0].expr", "object('v1','ConfigMap','default','a').data =="), field: "oracles[0].expr", msg: "CEL: ERROR: <input>:1:47: Syntax error"},
		{name: "cel oracle with an unknown variable", mut: set("oracles[0].expr", "bucket.status.ready"), field: "oracles[0].expr", msg: "undeclared reference to 'bucket'"},
		{name: "cel oracle that is not bool", mut: set("oracles[0].expr", "size(objects)"), field: "oracles[0].expr", msg: "yields int, want bool"},
		{name: "unknown scope", mut: set("oracles[0].scope", "eventually"), field: "oracles[0].scope", msg: `unknown scope "eventually"`, schema: true},
		{name: "scope on a non-cel oracle", mut: set("oracles[1].scope", "always"), field: "oracles[1].scope", msg: "only for type cel", schema: true},
		{name: "expr on a non-cel oracle", mut: set("oracles[1].expr", "true"), field: "oracles[1].expr", msg: "only for type cel", schema: true},
		{name: "write oracle without expr", mut: set("oracles[1].type", "write"), field: "oracles[1].expr", msg: "required for type write", schema: true},
		{name: "write oracle over a state", mut: all(set("oracles[1].type", "write"), set("oracles[1].expr", "exists('v1','ConfigMap','default','a')")), field: "oracles[1].expr", msg: "undeclared reference to 'exists'"},
		{name: "write oracle with a scope", mut: all(set("oracles[1].type", "write"), set("oracles[1].expr", "new != null"), set("oracles[1].scope", "always")), field: "oracles[1].scope", msg: "only for type cel", schema: true},
		{name: "write oracle selecting a bad kind", mut: all(set("oracles[1].type", "write"), set("oracles[1].expr", "true"), set("oracles[1].select", parse(`{"apiVersion": "apps/v1", "kind": "deployment"}`))), field: "oracles[1].select.kind", msg: "want a kind's name", schema: true},
		{name: "write oracle selecting an unknown kind", mut: all(set("oracles[1].type", "write"), set("oracles[1].expr", "true"), set("oracles[1].select", parse(`{"apiVersion": "apps/v1", "kind": "Deployment"}`))), field: "oracles[1].select.kind", msg: "unknown kind"},
		{name: "write oracle selecting scale", mut: all(set("oracles[1].type", "write"), set("oracles[1].expr", "true"), set("oracles[1].select", parse(`{"subresource": "scale"}`))), field: "oracles[1].select.subresource", msg: `unknown subresource "scale"`, schema: true},
		{name: "write oracle with an empty select", mut: all(set("oracles[1].type", "write"), set("oracles[1].expr", "true"), set("oracles[1].select", parse(`{}`))), field: "oracles[1].select", msg: "selects nothing in particular", schema: true},
		{name: "select on a cel oracle", mut: set("oracles[0].select", parse(`{"name": "podinfo"}`)), field: "oracles[0].select", msg: "only for types write, conventions and liveness", schema: true},
		{name: "unknown field in a select", mut: all(set("oracles[1].type", "write"), set("oracles[1].expr", "true"), set("oracles[1].select", parse(`{"verb": "update"}`))), field: "oracles[1].select.verb", msg: "unknown field", schema: true},
		{name: "quiescence window not positive", mut: all(set("oracles[1].type", "quiescence"), set("oracles[1].window", "0s")), field: "oracles[1].window", msg: "must be positive"},
		{name: "quiescence settle negative", mut: all(set("oracles[1].type", "quiescence"), set("oracles[1].settle", "-1s")), field: "oracles[1].settle", msg: "must not be negative"},
		{name: "quiescence maxWrites negative", mut: all(set("oracles[1].type", "quiescence"), set("oracles[1].maxWrites", -2)), field: "oracles[1].maxWrites", msg: "must be at least 1", schema: true},
		{name: "window on a panic oracle", mut: set("oracles[1].window", "1m"), field: "oracles[1].window", msg: "only for type quiescence", schema: true},
		{name: "maxWrites on a panic oracle", mut: set("oracles[1].maxWrites", 3), field: "oracles[1].maxWrites", msg: "only for type quiescence", schema: true},
		{name: "hashTimestamps on a panic oracle", mut: set("oracles[1].hashTimestamps", true), field: "oracles[1].hashTimestamps", msg: "only for type nonConvergence", schema: true},
		{name: "transitionOn on a panic oracle", mut: set("oracles[1].transitionOn", "condition"), field: "oracles[1].transitionOn", msg: "only for type conventions", schema: true},

		// Manifests.
		{name: "missing manifest file", mut: set("manifests", []any{"manifests/missing.yaml"}), field: "manifests[0]", msg: "no such file"},
		{name: "manifest with invalid YAML", mut: set("manifests", []any{"manifests/invalid.yaml"}), field: "manifests[0]", msg: "document 1: invalid YAML"},
		{name: "manifest that is not a mapping", mut: set("manifests", []any{"manifests/scalar.yaml"}), field: "manifests[0]", msg: "want a mapping"},
		{name: "manifest document without kind", mut: set("manifests", []any{"manifests/nokind.yaml"}), field: "manifests[0]", msg: "document 2: kind: required"},
		{name: "manifest duplicating an inline object", mut: set("manifests", []any{"manifests/source.yaml"}), field: "manifests[0]", msg: "document 3: duplicate object source.toolkit.fluxcd.io/v1/Bucket default/podinfo (also at objects[0])"},
		{name: "manifest kind unknown", known: &Known{Kinds: known.Kinds[:1]}, mut: set("manifests", []any{"manifests/nokind.yaml"}), field: "manifests[0]", msg: "document 1: kind: unknown kind v1/ConfigMap"},
		{name: "empty manifest path", mut: set("manifests", []any{""}), field: "manifests[0]", msg: "empty path", schema: true},
	}
}

func TestMalformed(t *testing.T) {
	seen := map[string]bool{}
	for _, tt := range malformedCases() {
		t.Run(tt.name, func(t *testing.T) {
			if seen[tt.name] {
				t.Fatalf("duplicate case name")
			}
			seen[tt.name] = true
			data := tt.data(t)
			k := known
			if tt.known != nil {
				k = *tt.known
			}
			s, err := scenario.Decode(testFile, data, "testdata")
			if err == nil {
				err = Scenario(s, k)
			}
			if err == nil {
				t.Fatalf("no error; want one at %q", tt.field)
			}
			var list []*scenario.Error
			var one *scenario.Error
			var many scenario.ErrorList
			switch {
			case errors.As(err, &many):
				list = many
			case errors.As(err, &one):
				list = []*scenario.Error{one}
			default:
				t.Fatalf("error %T is not a *scenario.Error: %v", err, err)
			}
			for _, e := range list {
				if e.File != testFile {
					t.Errorf("error names file %q, want %q", e.File, testFile)
				}
				if e.Field == tt.field && strings.Contains(e.Msg, tt.msg) {
					want := testFile + ": "
					if tt.field != "" {
						want += tt.field + ": "
					}
					if !strings.HasPrefix(e.Error(), want) {
						t.Errorf("Error() = %q, want prefix %q", e.Error(), want)
					}
					return
				}
			}
			t.Errorf("no error at %q containing %q; got:\n%v", tt.field, tt.msg, err)
		})
	}
}

func TestLoadTestdata(t *testing.T) {
	s, err := scenario.Load(filepath.Join("testdata", "valid", "full.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Scenario(s, known); err != nil {
		t.Fatal(err)
	}
	// Inline objects first, then the manifest's documents in order, the
	// empty one skipped.
	var names []string
	for _, o := range s.Objects {
		names = append(names, o["kind"].(string)+"/"+o["metadata"].(map[string]any)["name"].(string))
	}
	want := []string{"ConfigMap/settings", "Namespace/apps", "Secret/minio-credentials", "Bucket/podinfo"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	if gen := s.Objects[3]["metadata"].(map[string]any)["generation"]; gen != int64(1) {
		t.Errorf("manifest integer = %#v, want int64(1)", gen)
	}
	if s.Search != (scenario.Search{Mode: scenario.SearchDFS, MaxSteps: 300, MaxStates: 5000, MaxDepth: 30, Trials: 20, Seed: 7, Horizon: scenario.Duration{Duration: 30 * time.Minute}}) {
		t.Errorf("search = %+v", s.Search)
	}
	if got := s.Oracles[0].Scope; got != scenario.ScopeFinal {
		t.Errorf("default scope = %q, want final", got)
	}
	if got := *s.Perturbations[0].Lag; got.Duration != 2*time.Second {
		t.Errorf("lag = %v", got)
	}
	if got := string(s.Actions[2].Patch); got != `[{"op": "replace", "path": "/data/replicas", "value": "3"}]` {
		t.Errorf("json patch = %s", got)
	}
	if s.File() != filepath.Join("testdata", "valid", "full.json") {
		t.Errorf("File() = %q", s.File())
	}
	if got, want := s.ResolvePath("traces/x.json"), filepath.Join("testdata", "valid", "traces", "x.json"); got != want {
		t.Errorf("ResolvePath = %q, want %q", got, want)
	}
	if got := s.ResolvePath("/abs/x.json"); got != "/abs/x.json" {
		t.Errorf("ResolvePath(abs) = %q", got)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := scenario.Load(filepath.Join("testdata", "valid", "nope.json"))
	var e *scenario.Error
	if !errors.As(err, &e) || e.File == "" || !strings.Contains(e.Msg, "no such file") {
		t.Fatalf("Load error = %#v", err)
	}
}

func TestInlineNumbers(t *testing.T) {
	data := decodeBase(t, all(set("objects[0].spec.replicas", 3), set("objects[0].spec.ratio", 0.5), set("objects[0].spec.list", []any{1, 2.5})))
	s, err := scenario.Decode(testFile, data, "testdata")
	if err != nil {
		t.Fatal(err)
	}
	spec := s.Objects[0]["spec"].(map[string]any)
	want := map[string]any{"interval": "1m", "bucketName": "podinfo", "replicas": int64(3), "ratio": 0.5, "list": []any{int64(1), 2.5}}
	if diff := cmp.Diff(want, spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
}

func TestRoundTrip(t *testing.T) {
	s, err := scenario.Decode(testFile, decodeBase(t, nil), "testdata")
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := scenario.Decode(testFile, out, "testdata")
	if err != nil {
		t.Fatalf("re-decoding %s: %v", out, err)
	}
	if diff := cmp.Diff(s, s2, cmpopts.IgnoreUnexported(scenario.Scenario{}), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("round trip (-first +second):\n%s", diff)
	}
	for i := range s.Objects {
		f1, p1 := s.ObjectField(i)
		f2, p2 := s2.ObjectField(i)
		if f1 != f2 || p1 != p2 {
			t.Errorf("object %d is named %s%s, then %s%s", i, p1, f1, p2, f2)
		}
	}
}

func TestErrorList(t *testing.T) {
	data := decodeBase(t, all(set("name", "Bad Name"), set("search.mode", "bfs")))
	s, err := scenario.Decode(testFile, data, "testdata")
	if err != nil {
		t.Fatal(err)
	}
	err = Scenario(s, known)
	var list scenario.ErrorList
	if !errors.As(err, &list) || len(list) != 2 {
		t.Fatalf("Validate = %v, want two errors", err)
	}
	var first *scenario.Error
	if !errors.As(err, &first) || first.Field != "name" {
		t.Errorf("errors.As(*Error) = %v, want the name error", first)
	}
	want := testFile + `: name: "Bad Name": want lower-case letters, digits and '-' only` + "\n" +
		testFile + `: search.mode: unknown search mode "bfs": want one of reference, dfs, random, replay`
	if err.Error() != want {
		t.Errorf("Error() =\n%s\nwant\n%s", err, want)
	}
}

func TestKnownNilSkipsChecks(t *testing.T) {
	data := decodeBase(t, all(set("controllers[1]", "anything"), set("objects[0].kind", "Whatever")))
	s, err := scenario.Decode(testFile, data, "testdata")
	if err != nil {
		t.Fatal(err)
	}
	if err := Scenario(s, Known{}); err != nil {
		t.Errorf("Validate(Known{}) = %v", err)
	}
	if err := Scenario(s, known); err == nil {
		t.Errorf("Validate(known) accepted an unknown controller and kind")
	}
}

func TestParseKind(t *testing.T) {
	tests := []struct {
		in      string
		want    string // FormatKind of the result; "" for an error
		group   string
		version string
		kind    string
	}{
		{in: "v1/ConfigMap", want: "v1/ConfigMap", version: "v1", kind: "ConfigMap"},
		{in: "apps/v1/Deployment", want: "apps/v1/Deployment", group: "apps", version: "v1", kind: "Deployment"},
		{in: "source.toolkit.fluxcd.io/v1beta2/Bucket", want: "source.toolkit.fluxcd.io/v1beta2/Bucket", group: "source.toolkit.fluxcd.io", version: "v1beta2", kind: "Bucket"},
		{in: "Bucket"},
		{in: "v1/configmap"},
		{in: "/v1/ConfigMap"},
		{in: "a/b/c/Kind"},
		{in: ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			gvk, err := scenario.ParseKind(tt.in)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("ParseKind(%q) = %v, want an error", tt.in, gvk)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if gvk.Group != tt.group || gvk.Version != tt.version || gvk.Kind != tt.kind {
				t.Errorf("ParseKind(%q) = %#v", tt.in, gvk)
			}
			if got := scenario.FormatKind(gvk); got != tt.want {
				t.Errorf("FormatKind = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{in: `"3s"`, want: 3 * time.Second},
		{in: `"1h30m"`, want: 90 * time.Minute},
		{in: `"1.5s"`, want: 1500 * time.Millisecond},
		{in: `"0"`, want: 0},
		{in: `"3"`, wantErr: true},
		{in: `3`, wantErr: true},
		{in: `"3 s"`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var d scenario.Duration
			err := json.Unmarshal([]byte(tt.in), &d)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Unmarshal(%s) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if d.Duration != tt.want {
				t.Errorf("Unmarshal(%s) = %v, want %v", tt.in, d.Duration, tt.want)
			}
			out, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			var back scenario.Duration
			if err := json.Unmarshal(out, &back); err != nil || back != d {
				t.Errorf("round trip %s -> %s -> %v (%v)", tt.in, out, back, err)
			}
		})
	}
}

// TestNoCascade checks that one mistake yields one error, not a cascade
// through the fields that depend on it.
func TestNoCascade(t *testing.T) {
	tests := []struct {
		name  string
		mut   func(*testing.T, map[string]any)
		field string
	}{
		{name: "empty controllers", mut: set("controllers", []any{}), field: "controllers"},
		{name: "unknown op", mut: set("actions[0].op", "replace"), field: "actions[0].op"},
		{name: "unknown perturbation type", mut: set("perturbations[0].type", "chaos"), field: "perturbations[0].type"},
		{name: "unknown oracle type", mut: set("oracles[0].type", "deadlock"), field: "oracles[0].type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scenario.Decode(testFile, decodeBase(t, tt.mut), "testdata")
			if err != nil {
				t.Fatal(err)
			}
			err = Scenario(s, known)
			var e *scenario.Error
			if !errors.As(err, &e) || e.Field != tt.field {
				t.Fatalf("Validate = %v, want one error at %s", err, tt.field)
			}
			var list scenario.ErrorList
			if errors.As(err, &list) {
				t.Errorf("want one error, got %d:\n%v", len(list), err)
			}
		})
	}
}

// TestDefinedKinds: a kind served only once an object of the scenario exists
// (a CRD's, or one a project's definition object makes its controller serve,
// as a Crossplane XRD's XR kind) may be named by an action; without its
// definition it is an unknown kind.
func TestDefinedKinds(t *testing.T) {
	xr := map[string]any{"apiVersion": "example.org/v1", "kind": "XWidget", "metadata": map[string]any{"name": "w", "namespace": "default"}}
	def := map[string]any{"apiVersion": "example.org/v1", "kind": "Definer", "metadata": map[string]any{"name": "xwidgets"}}
	crd := map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": map[string]any{"name": "xwidgets.example.org"},
		"spec": map[string]any{"group": "example.org", "names": map[string]any{"kind": "XWidget", "plural": "xwidgets"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true}}}}
	scn := func(objects ...any) *scenario.Scenario {
		data := decodeBase(t, set("objects", objects))
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		m["actions"] = []any{map[string]any{"name": "create-xr", "at": map[string]any{"step": 1}, "op": "create", "object": xr}}
		data, _ = json.Marshal(m)
		s, err := scenario.Decode(testFile, data, "testdata")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	k := Known{Controllers: known.Controllers, Kinds: append(slices.Clone(known.Kinds),
		schema.GroupVersionKind{Group: "example.org", Version: "v1", Kind: "Definer"},
		schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})}
	if err := Scenario(scn(def), k); err == nil || !strings.Contains(err.Error(), "actions[0].object.kind: unknown kind example.org/v1/XWidget") {
		t.Errorf("an undefined kind: %v", err)
	}
	if err := Scenario(scn(crd), k); err != nil {
		t.Errorf("a kind the scenario's CRD defines: %v", err)
	}
	k.Defines = func(o map[string]any) []schema.GroupVersionKind {
		if o["kind"] == "Definer" {
			return []schema.GroupVersionKind{{Group: "example.org", Version: "v1", Kind: "XWidget"}}
		}
		return nil
	}
	if err := Scenario(scn(def), k); err != nil {
		t.Errorf("a kind the project's Defines derives from a scenario object: %v", err)
	}
	if k.Kinds[len(k.Kinds)-1].Kind != "CustomResourceDefinition" {
		t.Errorf("Validate changed the caller's Known.Kinds: %v", k.Kinds)
	}
}

// TestAfterWriteOfUser: a write trigger may count the scenario's own
// actions' writes ("user", as the explorer's write log names them).
func TestAfterWriteOfUser(t *testing.T) {
	data := decodeBase(t, set("actions[0].at", parse(`{"afterWrite": {"controller": "user", "verb": "delete", "n": 1}}`)))
	s, err := scenario.Decode(testFile, data, "testdata")
	if err != nil {
		t.Fatal(err)
	}
	if err := Scenario(s, known); err != nil {
		t.Fatal(err)
	}
}
