package scenario

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/ctrlbugs/corpus/engine/internal/editdist"
)

// Load reads and decodes the scenario file at path; manifests are resolved
// relative to the file's directory. It does not call Validate.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	return Decode(path, data, filepath.Dir(path))
}

// The scenario schema's version and kind: the first two fields of every
// scenario file, "apiVersion": "ctrlbugs.dev/v1", "kind": "Scenario".
const (
	APIVersion   = "ctrlbugs.dev/v1"
	KindScenario = "Scenario"
)

// Decode decodes a scenario strictly: a missing or unknown apiVersion or
// kind (a file before schema v1 names the command that migrates it),
// unknown fields (matched case-sensitively), values of the wrong JSON
// type, null values, bad duration strings, a kind in the single-string
// spelling before v1 and trailing data are errors naming the field's JSON
// path. file names the scenario in errors; baseDir is the directory
// manifests (and Scenario.ResolvePath) are relative to. Decode reads the
// manifests, appends their documents to Objects and applies the defaults;
// it does not call Validate.
func Decode(file string, data []byte, baseDir string) (*Scenario, error) {
	c := &collector{file: file}

	// Pass 1: the generic value, walked against the Go types. This finds
	// unknown fields and type errors with their exact paths.
	var raw any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		c.add("", syntaxMsg(data, err))
		return nil, c.list.Err()
	}
	if end := int(dec.InputOffset()); len(bytes.TrimSpace(data[end:])) > 0 {
		at := end + len(data[end:]) - len(bytes.TrimLeft(data[end:], " \t\r\n"))
		c.add("", fmt.Sprintf("trailing data after the scenario object at %s", position(data, at)))
		return nil, c.list.Err()
	}
	top, ok := raw.(map[string]any)
	if !ok {
		c.add("", "want a JSON object, got "+JSONKind(raw))
		return nil, c.list.Err()
	}
	// The version first: a file of another version is not read further
	// (before v1, every kind it names would be an error of its own).
	if c.header(top); c.list != nil {
		return nil, c.list.Err()
	}
	c.shape("", raw, reflect.TypeFor[Scenario]())
	if c.list != nil {
		return nil, c.list.Err()
	}

	// Pass 2: the typed decode. Pass 1 accepted the document, so this
	// should not fail; if it does, the error is still located.
	s := &Scenario{file: file, baseDir: baseDir}
	dec = json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(s); err != nil {
		c.list = append(c.list, translateJSONError(file, data, err))
		return nil, c.list.Err()
	}
	for i := range s.Objects {
		s.Objects[i] = normalizeNumbers(s.Objects[i]).(map[string]any)
		s.sources = append(s.sources, objectSource{field: fmt.Sprintf("objects[%d]", i)})
	}
	for i := range s.Actions {
		if s.Actions[i].Object != nil {
			s.Actions[i].Object = normalizeNumbers(s.Actions[i].Object).(map[string]any)
		}
	}
	for i, m := range s.Manifests {
		field := fmt.Sprintf("manifests[%d]", i)
		if m == "" {
			c.add(field, "empty path")
			continue
		}
		docs, err := readManifest(s.ResolvePath(m))
		if err != nil {
			c.add(field, err.Error())
			continue
		}
		for _, d := range docs {
			s.Objects = append(s.Objects, d.obj)
			s.sources = append(s.sources, objectSource{field: field, doc: d.n})
		}
	}
	if c.list != nil {
		return nil, c.list.Err()
	}
	s.applyDefaults()
	return s, nil
}

// header checks the file's apiVersion and kind.
func (c *collector) header(top map[string]any) {
	v, ok := top["apiVersion"]
	switch {
	case !ok:
		c.add("apiVersion", fmt.Sprintf("missing: this file predates scenario schema v1; migrate it with: make migrate-scenarios SCENARIO=%s", c.file))
		return
	case v != APIVersion:
		got := JSONKind(v)
		if s, isStr := v.(string); isStr {
			got = strconv.Quote(s)
		}
		c.add("apiVersion", fmt.Sprintf("unknown scenario schema version %s: the supported apiVersion is %q", got, APIVersion))
		return
	}
	switch k, ok := top["kind"]; {
	case !ok:
		c.add("kind", fmt.Sprintf("missing: want %q (with \"apiVersion\": %q)", KindScenario, APIVersion))
	case k != KindScenario:
		got := JSONKind(k)
		if s, isStr := k.(string); isStr {
			got = strconv.Quote(s)
		}
		c.add("kind", fmt.Sprintf("%s: want %q", got, KindScenario))
	}
}

var (
	durationType = reflect.TypeFor[Duration]()
	rawType      = reflect.TypeFor[json.RawMessage]()
	typeRefType  = reflect.TypeFor[TypeRef]()
)

// hasTypeRef reports whether struct type t embeds a TypeRef.
func hasTypeRef(t reflect.Type) bool {
	for f := range t.Fields() {
		if f.Anonymous && f.Type == typeRefType {
			return true
		}
	}
	return false
}

// shape checks the generic JSON value v against the Go type t, recording
// errors under path.
func (c *collector) shape(path string, v any, t reflect.Type) {
	switch t {
	case rawType:
		return // any JSON value
	case durationType:
		s, ok := v.(string)
		if !ok {
			c.add(path, "want a duration string such as \"3s\", got "+JSONKind(v))
			return
		}
		if _, err := parseDuration(s); err != nil {
			c.add(path, err.Error())
		}
		return
	}
	if v == nil {
		c.add(path, "null is not allowed; leave the field out instead")
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		c.shape(path, v, t.Elem())
	case reflect.Map: // map[string]any: any object
		if _, ok := v.(map[string]any); !ok {
			c.add(path, "want object, got "+JSONKind(v))
		}
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			c.add(path, "want object, got "+JSONKind(v))
			return
		}
		fields := jsonFields(t)
		// A perturbation is a union discriminated by its type: an unknown
		// field is reported against that type's fields.
		offered := fields
		if pt, ok := perturbationFields(t, m); ok {
			offered = pt
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			f, ok := fields[k]
			if !ok {
				c.add(join(path, k), unknownFieldMsg(k, offered))
				continue
			}
			c.shape(join(path, k), m[k], f.Type)
		}
		// A kind in the single string of scenarios before v1, its
		// apiVersion missing: the message shows its v1 spelling.
		if k, ok := m["kind"].(string); ok && hasTypeRef(t) && m["apiVersion"] == nil && strings.Contains(k, "/") {
			c.add(join(path, "kind"), kindNameMsg(k))
		}
	case reflect.Slice:
		a, ok := v.([]any)
		if !ok {
			c.add(path, "want array, got "+JSONKind(v))
			return
		}
		for i, e := range a {
			c.shape(fmt.Sprintf("%s[%d]", path, i), e, t.Elem())
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			c.add(path, "want string, got "+JSONKind(v))
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			c.add(path, "want boolean, got "+JSONKind(v))
		}
	case reflect.Int, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			c.add(path, "want integer, got "+JSONKind(v))
			return
		}
		if _, err := strconv.ParseInt(string(n), 10, t.Bits()); err != nil {
			c.add(path, fmt.Sprintf("want integer, got %s", n))
		}
	default:
		// A field type this walker does not know: a programming error in
		// this package, caught by TestSchemaMatchesTypes.
		c.add(path, fmt.Sprintf("internal error: no shape check for %s", t))
	}
}

// jsonFields maps the JSON names of t's fields to the fields.
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	m := map[string]reflect.StructField{}
	for f := range t.Fields() {
		if f.Anonymous && f.Type == typeRefType {
			// Embedded: its fields are the holder's, as encoding/json
			// reads them.
			maps.Copy(m, jsonFields(f.Type))
			continue
		}
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = f
	}
	return m
}

func unknownFieldMsg(k string, fields map[string]reflect.StructField) string {
	for name := range fields {
		if strings.EqualFold(name, k) {
			return fmt.Sprintf("unknown field (did you mean %q?)", name)
		}
	}
	// The nearest names, within two edits (case ignored).
	var near []string
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if editdist.Levenshtein(strings.ToLower(name), strings.ToLower(k)) <= 2 {
			near = append(near, fmt.Sprintf("%q", name))
		}
	}
	if len(near) > 0 {
		return fmt.Sprintf("unknown field (did you mean %s?); known fields are %s", strings.Join(near, " or "), strings.Join(slices.Sorted(maps.Keys(fields)), ", "))
	}
	return fmt.Sprintf("unknown field; known fields are %s", strings.Join(slices.Sorted(maps.Keys(fields)), ", "))
}

// perturbationFields is, for a perturbation object m of a known type, the
// fields that type takes (perturb's table) and its type field.
func perturbationFields(t reflect.Type, m map[string]any) (map[string]reflect.StructField, bool) {
	if t != reflect.TypeFor[Perturbation]() {
		return nil, false
	}
	name, _ := m["type"].(string)
	fields, ok := PerturbationFields[name]
	if !ok {
		return nil, false
	}
	all := jsonFields(t)
	out := map[string]reflect.StructField{"type": all["type"]}
	for _, f := range fields {
		if sf, ok := all[f]; ok {
			out[f] = sf
		}
	}
	return out, true
}

// JSONKind names the JSON type of a decoded value (with a number, the
// number), for messages.
func JSONKind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64, int64:
		return "number " + fmt.Sprint(v)
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// syntaxMsg describes a JSON syntax error with its line and column.
func syntaxMsg(data []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// Offset counts the bytes read, including the offending one.
		return fmt.Sprintf("invalid JSON at %s: %s", position(data, int(se.Offset)-1), se.Error())
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "invalid JSON: unexpected end of input"
	}
	return "invalid JSON: " + err.Error()
}

func position(data []byte, offset int) string {
	offset = min(max(offset, 0), len(data))
	line := bytes.Count(data[:offset], []byte("\n")) + 1
	col := offset - bytes.LastIndexByte(data[:offset], '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

var jsonIndexRE = regexp.MustCompile(`\.(\d+)(\.|$)`)

// translateJSONError locates an encoding/json error. Its paths are dotted
// with bare indexes ("actions.0.op"); ours use brackets ("actions[0].op").
func translateJSONError(file string, data []byte, err error) *Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		for jsonIndexRE.MatchString(field) {
			field = jsonIndexRE.ReplaceAllString(field, "[$1]$2")
		}
		return &Error{File: file, Field: field, Msg: fmt.Sprintf("want %s, got JSON %s", te.Type, te.Value)}
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		n, _ := strconv.Unquote(name)
		return &Error{File: file, Field: n, Msg: "unknown field"}
	}
	return &Error{File: file, Msg: syntaxMsg(data, err)}
}

// normalizeNumbers turns json.Numbers into int64 when integral and
// float64 otherwise, as unstructured.Unstructured expects.
func normalizeNumbers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = normalizeNumbers(e)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = normalizeNumbers(e)
		}
		return v
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	default:
		return v
	}
}

type manifestDoc struct {
	n   int // 1-based document number in the file
	obj map[string]any
}

// readManifest reads a multi-document YAML file. Empty documents are
// skipped; every other document must be a mapping.
func readManifest(path string) ([]manifestDoc, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs []manifestDoc
	for n := 1; ; n++ {
		doc, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %v", path, n, err)
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: invalid YAML: %v", path, n, err)
		}
		dec := json.NewDecoder(bytes.NewReader(j))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s: document %d: %v", path, n, err)
		}
		if v == nil {
			continue // empty document
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: document %d: want a mapping (an object), got %s", path, n, JSONKind(v))
		}
		docs = append(docs, manifestDoc{n: n, obj: normalizeNumbers(m).(map[string]any)})
	}
	return docs, nil
}
