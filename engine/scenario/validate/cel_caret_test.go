package validate

import (
	"testing"

	"github.com/ctrlbugs/corpus/engine/scenario"
)

// TestCELErrorKeepsCaret: an expression that does not compile is reported
// with cel-go's whole text, the expression and the caret under the
// problem included, after the file and the field's JSON path.
func TestCELErrorKeepsCaret(t *testing.T) {
	for _, tt := range []struct {
		name string
		mut  func(*testing.T, map[string]any)
		want string
	}{
		{
			name: "oracle",
			mut:  set("oracles[0].expr", "has(objekt('v1', 'ConfigMap', 'default', 'a').data)"),
			want: testFile + ": oracles[0].expr: CEL: ERROR: <input>:1:11: undeclared reference to 'objekt' (in container '')\n" +
				" | has(objekt('v1', 'ConfigMap', 'default', 'a').data)\n" +
				" | ..........^",
		},
		{
			name: "trigger",
			mut:  set("actions[0].at", parse(`{"when": "exists('v1','ConfigMap')"}`)),
			want: testFile + ": actions[0].at.when: CEL: ERROR: <input>:1:7: found no matching overload for 'exists' applied to '(string, string)'\n" +
				" | exists('v1','ConfigMap')\n" +
				" | ......^",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scenario.Decode(testFile, decodeBase(t, tt.mut), "testdata")
			if err != nil {
				t.Fatal(err)
			}
			err = Scenario(s, known)
			if err == nil || err.Error() != tt.want {
				t.Errorf("Validate =\n%v\nwant\n%s", err, tt.want)
			}
		})
	}
}
