package scenario

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestSchemaMatchesTypes checks, by reflection on the json tags, that
// every Go field has a schema property of the matching JSON type and every
// schema property has a Go field, for every struct in a Scenario.
func TestSchemaMatchesTypes(t *testing.T) {
	var root map[string]any
	if err := json.Unmarshal(Schema(), &root); err != nil {
		t.Fatal(err)
	}
	defs, _ := root["$defs"].(map[string]any)
	resolve := func(node map[string]any) map[string]any {
		for {
			ref, ok := node["$ref"].(string)
			if !ok {
				return node
			}
			name, ok := strings.CutPrefix(ref, "#/$defs/")
			if !ok || defs[name] == nil {
				t.Fatalf("bad $ref %q", ref)
			}
			node = defs[name].(map[string]any)
		}
	}
	checked := map[reflect.Type]bool{}
	var walk func(path string, typ reflect.Type, node map[string]any)
	walk = func(path string, typ reflect.Type, node map[string]any) {
		checked[typ] = true
		props, _ := resolve(node)["properties"].(map[string]any)
		fields := jsonFields(typ)
		goNames := slices.Sorted(maps.Keys(fields))
		schemaNames := slices.Sorted(maps.Keys(props))
		if !slices.Equal(goNames, schemaNames) {
			t.Errorf("%s: Go fields %v, schema properties %v", path, goNames, schemaNames)
		}
		for _, name := range goNames {
			p, ok := props[name].(map[string]any)
			if !ok {
				continue
			}
			ft := fields[name].Type
			fpath := join(path, name)
			if want := jsonTypeOf(ft); want != "" {
				if got := schemaTypeOf(resolve(p)); got != want {
					t.Errorf("%s: Go type %s is JSON %s, schema says %q", fpath, ft, want, got)
				}
			}
			elem := ft
			for elem.Kind() == reflect.Pointer || elem.Kind() == reflect.Slice && elem != rawType {
				if elem.Kind() == reflect.Slice {
					p, _ = resolve(p)["items"].(map[string]any)
				}
				elem = elem.Elem()
			}
			if elem.Kind() == reflect.Struct && elem != durationType {
				walk(fpath, elem, p)
			}
		}
	}
	walk("(scenario)", reflect.TypeFor[Scenario](), root)
	for _, typ := range []reflect.Type{
		reflect.TypeFor[Scenario](), reflect.TypeFor[Trigger](), reflect.TypeFor[WriteRef](), reflect.TypeFor[Action](),
		reflect.TypeFor[Perturbation](), reflect.TypeFor[Search](), reflect.TypeFor[Oracle](),
	} {
		if !checked[typ] {
			t.Errorf("%s was never reached from Scenario", typ)
		}
	}
}

// jsonTypeOf is the JSON type a Go field decodes from; "" when any.
func jsonTypeOf(t reflect.Type) string {
	switch t {
	case durationType:
		return "string"
	case rawType:
		return ""
	}
	switch t.Kind() {
	case reflect.Pointer:
		return jsonTypeOf(t.Elem())
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Slice:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	panic(fmt.Sprintf("no JSON type for %s", t))
}

// schemaTypeOf is a schema node's declared type, or the type of its enum
// values.
func schemaTypeOf(node map[string]any) string {
	if typ, ok := node["type"].(string); ok {
		return typ
	}
	if enum, ok := node["enum"].([]any); ok && len(enum) > 0 {
		if _, ok := enum[0].(string); ok {
			return "string"
		}
	}
	return fmt.Sprint(node["type"])
}
