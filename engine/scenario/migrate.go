package scenario

// Migrate rewrites a scenario file of before schema v1 into v1, editing
// its bytes in place so that its field order, indentation and line
// breaks stay as they were.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Migrate rewrites scenario file data into schema v1: it puts
// "apiVersion": "ctrlbugs.dev/v1" and "kind": "Scenario" first, and splits
// every kind written as one string ("source.toolkit.fluxcd.io/v1/Bucket",
// in a perturbation, an afterWrite or atWriteOf, an apiError's call, a write
// oracle's select) into "apiVersion": "source.toolkit.fluxcd.io/v1",
// "kind": "Bucket" in its place. Everything else is left byte for byte:
// the new fields follow the layout of the field they precede (on a line
// of their own with the same indentation, or on the same line). A v1 file
// comes back unchanged. It fails on data that is not a JSON object, on
// another apiVersion, and on a kind string that is not group/version/Kind.
// The result is not validated: Decode and Validate judge it.
func Migrate(data []byte) ([]byte, error) {
	p := &jparser{data: data}
	p.ws()
	root, err := p.value()
	if err != nil {
		return nil, err
	}
	if p.ws(); p.i != len(data) {
		return nil, fmt.Errorf("trailing data after the scenario object at %s", position(data, p.i))
	}
	if root.typ != '{' {
		return nil, fmt.Errorf("want a JSON object")
	}
	var edits []edit
	switch av := root.member("apiVersion"); {
	case av == nil:
		if root.member("kind") != nil {
			return nil, fmt.Errorf("kind: set without apiVersion: not a scenario file of before schema v1")
		}
		edits = append(edits, insertFirst(data, root, [][2]string{{"apiVersion", APIVersion}, {"kind", KindScenario}}))
	case av.str(data) != APIVersion:
		return nil, fmt.Errorf("apiVersion %s: unknown scenario schema version; this migrates files of before v1 to %q", data[av.start:av.end], APIVersion)
	}
	kindEdits, err := kindRefEdits(data, "", root, reflect.TypeFor[Scenario]())
	if err != nil {
		return nil, err
	}
	edits = append(edits, kindEdits...)
	slices.SortFunc(edits, func(a, b edit) int { return b.start - a.start })
	out := slices.Clone(data)
	for _, e := range edits {
		out = slices.Concat(out[:e.start], []byte(e.text), out[e.end:])
	}
	return out, nil
}

// edit replaces data[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// kindRefEdits finds, walking v along the Go type t, the objects that hold
// a TypeRef and whose kind is one string, and splits it.
func kindRefEdits(data []byte, path string, v *jnode, t reflect.Type) ([]edit, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == durationType || t == rawType {
		return nil, nil
	}
	var out []edit
	switch {
	case t.Kind() == reflect.Struct && v.typ == '{':
		fields := jsonFields(t)
		for _, m := range v.members {
			f, ok := fields[m.key]
			if !ok {
				continue
			}
			e, err := kindRefEdits(data, join(path, m.key), m.val, f.Type)
			if err != nil {
				return nil, err
			}
			out = append(out, e...)
		}
		k := v.member("kind")
		if !hasTypeRef(t) || k == nil || k.typ != '"' || v.member("apiVersion") != nil {
			return out, nil
		}
		s := k.str(data)
		if !strings.Contains(s, "/") {
			return out, nil // not the old spelling: Decode judges it
		}
		gvk, err := ParseKind(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", join(path, "kind"), err)
		}
		// "kind": "g/v/K" becomes "apiVersion": "g/v", "kind": "K", the
		// new field laid out as the kind field is (its own line, or not).
		var kindMember *jmember
		for i := range v.members {
			if v.members[i].key == "kind" {
				kindMember = &v.members[i]
			}
		}
		sep := leadingSpace(data, kindMember.keyStart)
		if !strings.Contains(sep, "\n") {
			sep = " "
		}
		text := fmt.Sprintf(`"apiVersion": %s,%s"kind": %s`, quote(gvk.GroupVersion().String()), sep, quote(gvk.Kind))
		out = append(out, edit{start: kindMember.keyStart, end: k.end, text: text})
	case t.Kind() == reflect.Slice && v.typ == '[':
		for i, e := range v.items {
			ed, err := kindRefEdits(data, fmt.Sprintf("%s[%d]", path, i), e, t.Elem())
			if err != nil {
				return nil, err
			}
			out = append(out, ed...)
		}
	}
	return out, nil
}

// insertFirst puts fields before the first member of object o, laid out as
// that member is: after the same white space (a new line and its
// indentation, or a space when o is written on one line).
func insertFirst(data []byte, o *jnode, fields [][2]string) edit {
	var parts []string
	for _, f := range fields {
		parts = append(parts, fmt.Sprintf("%s: %s", quote(f[0]), quote(f[1])))
	}
	if len(o.members) == 0 {
		return edit{start: o.start + 1, end: o.start + 1, text: strings.Join(parts, ", ")}
	}
	at := o.members[0].keyStart
	sep := leadingSpace(data, at)
	if !strings.Contains(sep, "\n") {
		// One line: the fields follow the brace as the first did.
		return edit{start: at, end: at, text: strings.Join(parts, ", ") + ", "}
	}
	return edit{start: at, end: at, text: strings.Join(parts, ","+sep) + "," + sep}
}

// leadingSpace is the white space before offset i.
func leadingSpace(data []byte, i int) string {
	j := i
	for j > 0 && strings.IndexByte(" \t\r\n", data[j-1]) >= 0 {
		j--
	}
	return string(data[j:i])
}

func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// jnode is a JSON value and where it is in the data: typ is '{', '[', '"'
// or 0 for a number or literal.
type jnode struct {
	typ        byte
	start, end int
	members    []jmember // typ '{'
	items      []*jnode  // typ '['
}

type jmember struct {
	key      string
	keyStart int
	val      *jnode
}

// member is the value of o's member key (the last, as encoding/json reads
// a duplicate), nil when o has none.
func (o *jnode) member(key string) *jnode {
	var v *jnode
	for _, m := range o.members {
		if m.key == key {
			v = m.val
		}
	}
	return v
}

// str is a string node's value ("" for another node).
func (o *jnode) str(data []byte) string {
	if o.typ != '"' {
		return ""
	}
	var s string
	_ = json.Unmarshal(data[o.start:o.end], &s)
	return s
}

// jparser reads JSON keeping offsets; it accepts what encoding/json
// accepts for the shapes a scenario has.
type jparser struct {
	data []byte
	i    int
}

func (p *jparser) ws() {
	for p.i < len(p.data) && strings.IndexByte(" \t\r\n", p.data[p.i]) >= 0 {
		p.i++
	}
}

func (p *jparser) fail(want string) error {
	if p.i >= len(p.data) {
		return fmt.Errorf("invalid JSON: unexpected end of input, want %s", want)
	}
	return fmt.Errorf("invalid JSON at %s: want %s, got %q", position(p.data, p.i), want, p.data[p.i])
}

func (p *jparser) value() (*jnode, error) {
	if p.i >= len(p.data) {
		return nil, p.fail("a value")
	}
	n := &jnode{start: p.i}
	switch p.data[p.i] {
	case '{':
		n.typ = '{'
		p.i++
		p.ws()
		if p.i < len(p.data) && p.data[p.i] == '}' {
			p.i++
			break
		}
		for {
			p.ws()
			keyStart := p.i
			if p.i >= len(p.data) || p.data[p.i] != '"' {
				return nil, p.fail("a field name")
			}
			k, err := p.value()
			if err != nil {
				return nil, err
			}
			p.ws()
			if p.i >= len(p.data) || p.data[p.i] != ':' {
				return nil, p.fail("':'")
			}
			p.i++
			p.ws()
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			n.members = append(n.members, jmember{key: k.str(p.data), keyStart: keyStart, val: v})
			p.ws()
			if p.i < len(p.data) && p.data[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.data) && p.data[p.i] == '}' {
				p.i++
				break
			}
			return nil, p.fail("',' or '}'")
		}
	case '[':
		n.typ = '['
		p.i++
		p.ws()
		if p.i < len(p.data) && p.data[p.i] == ']' {
			p.i++
			break
		}
		for {
			p.ws()
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, v)
			p.ws()
			if p.i < len(p.data) && p.data[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.data) && p.data[p.i] == ']' {
				p.i++
				break
			}
			return nil, p.fail("',' or ']'")
		}
	case '"':
		n.typ = '"'
		p.i++
		for {
			if p.i >= len(p.data) {
				return nil, p.fail("the string's closing '\"'")
			}
			switch p.data[p.i] {
			case '\\':
				p.i += 2
				continue
			case '"':
				p.i++
			default:
				p.i++
				continue
			}
			break
		}
		if !json.Valid(p.data[n.start:p.i]) {
			return nil, fmt.Errorf("invalid JSON string at %s", position(p.data, n.start))
		}
	default:
		for p.i < len(p.data) && strings.IndexByte(",]} \t\r\n", p.data[p.i]) < 0 {
			p.i++
		}
		if p.i == n.start || !json.Valid(p.data[n.start:p.i]) {
			return nil, fmt.Errorf("invalid JSON value at %s", position(p.data, n.start))
		}
	}
	n.end = p.i
	return n, nil
}
