package trace

import (
	"slices"
	"strconv"
	"unicode/utf8"
)

// Steps are most of a trace and were encoded by reflection
// (encoding/json), a fifth of a reading step's cost. appendStep writes a
// Step as the Writer's json.Encoder would, byte for byte (field order,
// omitempty, map keys sorted, strings escaped as with SetEscapeHTML(false),
// the trailing newline): TestAppendStep compares the two on generated
// steps and on every step of the recorded traces. A change to Step, Op,
// View, Choice or Event must change both.

// appendStep appends s as one JSON line.
func appendStep(b []byte, s *Step) []byte {
	b = append(b, `{"type":`...)
	b = appendJSONString(b, s.Type)
	b = append(b, `,"step":`...)
	b = strconv.AppendInt(b, int64(s.Step), 10)
	b = appendField(b, "t", s.T)
	b = appendField(b, "end", s.End)
	b = appendField(b, "controller", s.Controller)
	b = appendField(b, "request", s.Request)
	if s.Choice != nil {
		b = append(b, `,"choice":{"options":`...)
		b = appendStrings(b, s.Choice.Options)
		b = append(b, `,"chosen":`...)
		b = strconv.AppendInt(b, int64(s.Choice.Chosen), 10)
		b = append(b, '}')
	}
	if len(s.Views) > 0 {
		b = append(b, `,"views":{`...)
		keys := make([]string, 0, len(s.Views))
		for k := range s.Views {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			v := s.Views[k]
			b = appendJSONString(b, k)
			b = append(b, `:{"rev":`...)
			b = strconv.AppendInt(b, v.Rev, 10)
			b = append(b, `,"current":`...)
			b = strconv.AppendInt(b, v.Current, 10)
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	if len(s.Ops) > 0 {
		b = append(b, `,"ops":[`...)
		for i := range s.Ops {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendOp(b, &s.Ops[i])
		}
		b = append(b, ']')
	}
	if len(s.Events) > 0 {
		b = append(b, `,"events":[`...)
		for i, e := range s.Events {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"t":`...)
			b = appendJSONString(b, e.T)
			b = appendField(b, "object", e.Object)
			b = appendField(b, "type", e.Type)
			b = appendField(b, "reason", e.Reason)
			b = appendField(b, "message", e.Message)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if s.Resumes != 0 {
		b = append(b, `,"resumes":`...)
		b = strconv.AppendInt(b, int64(s.Resumes), 10)
	}
	b = appendField(b, "result", s.Result)
	b = appendOmitEmpty(b, "requeue", s.Requeue)
	b = appendOmitEmpty(b, "error", s.Error)
	b = appendOmitEmpty(b, "panic", s.Panic)
	if len(s.Notes) > 0 {
		b = append(b, `,"notes":`...)
		b = appendStrings(b, s.Notes)
	}
	return append(b, '}', '\n')
}

func appendOp(b []byte, o *Op) []byte {
	b = append(b, `{"t":`...)
	b = appendJSONString(b, o.T)
	b = appendField(b, "verb", string(o.Verb))
	b = appendOmitEmpty(b, "sub", o.Sub)
	b = appendOmitEmpty(b, "patchType", string(o.PatchType))
	b = appendField(b, "kind", o.Kind)
	b = appendOmitEmpty(b, "key", o.Key)
	if o.Cached {
		b = append(b, `,"cached":true`...)
	}
	if o.ViewRev != 0 {
		b = append(b, `,"viewRev":`...)
		b = strconv.AppendInt(b, o.ViewRev, 10)
	}
	b = appendOmitEmpty(b, "observed", o.Observed)
	b = appendOmitEmpty(b, "current", o.Current)
	b = appendOmitEmpty(b, "pre", o.Pre)
	b = appendOmitEmpty(b, "before", o.Before)
	b = appendOmitEmpty(b, "after", o.After)
	if o.Items != 0 {
		b = append(b, `,"items":`...)
		b = strconv.AppendInt(b, int64(o.Items), 10)
	}
	b = appendField(b, "outcome", o.Outcome)
	b = appendOmitEmpty(b, "error", o.Error)
	if len(o.Changed) > 0 {
		b = append(b, `,"changed":`...)
		b = appendStrings(b, o.Changed)
	}
	if len(o.Managed) > 0 {
		b = append(b, `,"managed":`...)
		b = appendStrings(b, o.Managed)
	}
	return append(b, '}')
}

// appendField appends ,"name":"value".
func appendField(b []byte, name, v string) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return appendJSONString(b, v)
}

// appendOmitEmpty is appendField for an omitempty string.
func appendOmitEmpty(b []byte, name, v string) []byte {
	if v == "" {
		return b
	}
	return appendField(b, name, v)
}

// appendStrings appends a string slice as encoding/json does (nil: null).
func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

const hexDigits = "0123456789abcdef"

// appendJSONString quotes s as encoding/json does without HTML escaping:
// '"' and '\\' escaped, control characters as \b \f \n \r \t or \u00XX,
// invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
