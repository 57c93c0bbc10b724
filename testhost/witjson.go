package testhost

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"unicode/utf8"
)

// This file checks JSON documents against WIT types, with the mapping
// wit/policy.wit documents:
//   - record: an object; field `kebab-name` is key `kebabName`; unknown keys
//     are errors; a non-option field is required (and not null); an option
//     field may be absent or null;
//   - enum: one of the case names, as a string;
//   - variant: an object whose "kind" is a case name, with the fields of the
//     case's record inlined beside it; a case without payload is {"kind":...};
//   - list: an array; option (outside a record): null or the type;
//   - tuple: an array of that many elements;
//   - integers: JSON numbers written as integers, in the type's range;
//     floats: any number; bool; string; char: a one-character string;
//   - json-object (declared a string alias, JSONObject): any JSON object.
// Duplicate keys are errors too (a decoder would silently take one of them).

// JSONObject names the type the mapping writes as a JSON object of any
// members, though WIT declares it a string: WIT has no free-form JSON type.
const JSONObject = "json-object"

// ValidateJSON checks data against t.
func (w *WIT) ValidateJSON(t *Type, data []byte) error {
	v, err := parseJV(data)
	if err != nil {
		return err
	}
	return w.check(t, v, "$")
}

// ValidateNamed checks data against the named type.
func (w *WIT) ValidateNamed(name string, data []byte) error {
	return w.ValidateJSON(&Type{Kind: KindNamed, Name: name}, data)
}

type jvKind int

const (
	jvNull jvKind = iota
	jvBool
	jvNumber
	jvString
	jvArray
	jvObject
)

func (k jvKind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// jv is a parsed JSON value that keeps object keys in order and numbers as text.
type jv struct {
	kind jvKind
	b    bool
	s    string // string, or number text
	arr  []jv
	obj  []jvMember
}

type jvMember struct {
	key string
	val jv
}

func (v jv) get(key string) (jv, bool) {
	for _, m := range v.obj {
		if m.key == key {
			return m.val, true
		}
	}
	return jv{}, false
}

func parseJV(data []byte) (jv, error) {
	if !utf8.Valid(data) {
		return jv{}, errors.New("json: invalid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := readJV(dec, "$")
	if err != nil {
		return jv{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return jv{}, errors.New("json: data after the top-level value")
	}
	return v, nil
}

func readJV(dec *json.Decoder, path string) (jv, error) {
	tok, err := dec.Token()
	if err != nil {
		return jv{}, fmt.Errorf("json: %s: %w", path, err)
	}
	switch t := tok.(type) {
	case nil:
		return jv{kind: jvNull}, nil
	case bool:
		return jv{kind: jvBool, b: t}, nil
	case json.Number:
		return jv{kind: jvNumber, s: t.String()}, nil
	case string:
		return jv{kind: jvString, s: t}, nil
	case json.Delim:
		switch t {
		case '[':
			v := jv{kind: jvArray}
			for i := 0; dec.More(); i++ {
				e, err := readJV(dec, fmt.Sprintf("%s[%d]", path, i))
				if err != nil {
					return jv{}, err
				}
				v.arr = append(v.arr, e)
			}
			if _, err := dec.Token(); err != nil { // ]
				return jv{}, fmt.Errorf("json: %s: %w", path, err)
			}
			return v, nil
		case '{':
			v := jv{kind: jvObject}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return jv{}, fmt.Errorf("json: %s: %w", path, err)
				}
				k := kt.(string)
				if _, dup := v.get(k); dup {
					return jv{}, fmt.Errorf("json: %s: duplicate key %q", path, k)
				}
				e, err := readJV(dec, path+"."+k)
				if err != nil {
					return jv{}, err
				}
				v.obj = append(v.obj, jvMember{k, e})
			}
			if _, err := dec.Token(); err != nil { // }
				return jv{}, fmt.Errorf("json: %s: %w", path, err)
			}
			return v, nil
		}
	}
	return jv{}, fmt.Errorf("json: %s: unexpected token %v", path, tok)
}

var intText = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

func (w *WIT) check(t *Type, v jv, path string) error {
	mismatch := func(want string) error {
		return fmt.Errorf("%s: want %s, got %s", path, want, v.kind)
	}
	switch t.Kind {
	case KindPrim:
		return checkPrim(t.Name, v, path)
	case KindOption:
		if v.kind == jvNull {
			return nil
		}
		return w.check(t.Elem, v, path)
	case KindList:
		if v.kind != jvArray {
			return mismatch(t.String() + " (an array)")
		}
		for i, e := range v.arr {
			if err := w.check(t.Elem, e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	case KindTuple:
		if v.kind != jvArray {
			return mismatch(t.String() + " (an array)")
		}
		if len(v.arr) != len(t.Elems) {
			return fmt.Errorf("%s: want %d elements for %s, got %d", path, len(t.Elems), t, len(v.arr))
		}
		for i, e := range v.arr {
			if err := w.check(t.Elems[i], e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	case KindResult:
		return fmt.Errorf("%s: %s has no JSON form (an export's result is its output or its error)", path, t)
	case KindNamed:
		def := w.Types[t.Name]
		if def == nil {
			return fmt.Errorf("%s: unknown type %q", path, t.Name)
		}
		switch def.Kind {
		case DefAlias:
			if def.Name == JSONObject {
				if v.kind != jvObject {
					return mismatch(JSONObject + " (an object)")
				}
				return nil
			}
			return w.check(def.Target, v, path)
		case DefEnum:
			if v.kind != jvString {
				return mismatch("enum " + def.Name + " (a string)")
			}
			for _, c := range def.Cases {
				if c.Name == v.s {
					return nil
				}
			}
			return fmt.Errorf("%s: %q is not a case of enum %s (%s)", path, v.s, def.Name, caseNames(def))
		case DefRecord:
			if v.kind != jvObject {
				return mismatch("record " + def.Name + " (an object)")
			}
			return w.checkFields(def, v, path, nil)
		case DefVariant:
			if v.kind != jvObject {
				return mismatch("variant " + def.Name + " (an object with \"kind\")")
			}
			kind, ok := v.get("kind")
			if !ok {
				return fmt.Errorf("%s: variant %s needs \"kind\"", path, def.Name)
			}
			if kind.kind != jvString {
				return fmt.Errorf("%s.kind: want a string, got %s", path, kind.kind)
			}
			for _, c := range def.Cases {
				if c.Name != kind.s {
					continue
				}
				if c.Type == nil {
					for _, m := range v.obj {
						if m.key != "kind" {
							return fmt.Errorf("%s.%s: unknown key (case %s.%s has no payload)", path, m.key, def.Name, c.Name)
						}
					}
					return nil
				}
				payload := w.Types[c.Type.Name]
				if c.Type.Kind != KindNamed || payload == nil || payload.Kind != DefRecord {
					return fmt.Errorf("%s: case %s.%s's payload %s is not a record, which the JSON mapping cannot inline", path, def.Name, c.Name, c.Type)
				}
				return w.checkFields(payload, v, path, []string{"kind"})
			}
			return fmt.Errorf("%s.kind: %q is not a case of variant %s (%s)", path, kind.s, def.Name, caseNames(def))
		}
	}
	return fmt.Errorf("%s: cannot check %s", path, t)
}

// checkFields checks v's members against a record's fields; extra names the
// keys that belong to the enclosing variant.
func (w *WIT) checkFields(def *TypeDef, v jv, path string, extra []string) error {
	known := map[string]Field{}
	for _, f := range def.Fields {
		known[LowerCamel(f.Name)] = f
	}
	for _, m := range v.obj {
		if _, ok := known[m.key]; ok {
			continue
		}
		isExtra := false
		for _, e := range extra {
			isExtra = isExtra || e == m.key
		}
		if !isExtra {
			return fmt.Errorf("%s.%s: unknown key for record %s", path, m.key, def.Name)
		}
	}
	for _, f := range def.Fields {
		key := LowerCamel(f.Name)
		fv, ok := v.get(key)
		if f.Type.Kind == KindOption {
			if ok && fv.kind != jvNull {
				if err := w.check(f.Type.Elem, fv, path+"."+key); err != nil {
					return err
				}
			}
			continue
		}
		if !ok {
			return fmt.Errorf("%s: missing required field %q of record %s", path, key, def.Name)
		}
		if err := w.check(f.Type, fv, path+"."+key); err != nil {
			return err
		}
	}
	return nil
}

func caseNames(def *TypeDef) string {
	var b bytes.Buffer
	for i, c := range def.Cases {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Name)
	}
	return b.String()
}

func checkPrim(name string, v jv, path string) error {
	want := func(what string) error { return fmt.Errorf("%s: want %s, got %s", path, what, v.kind) }
	switch name {
	case "bool":
		if v.kind != jvBool {
			return want("bool")
		}
	case "string":
		if v.kind != jvString {
			return want("string")
		}
	case "char":
		if v.kind != jvString || utf8.RuneCountInString(v.s) != 1 {
			return fmt.Errorf("%s: want char (a one-character string)", path)
		}
	case "f32", "f64", "float32", "float64":
		if v.kind != jvNumber {
			return want(name)
		}
	case "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64":
		if v.kind != jvNumber {
			return want(name)
		}
		if !intText.MatchString(v.s) {
			return fmt.Errorf("%s: want %s, got non-integer %s", path, name, v.s)
		}
		bits, _ := strconv.Atoi(name[1:])
		var err error
		if name[0] == 'u' {
			_, err = strconv.ParseUint(v.s, 10, bits)
		} else {
			_, err = strconv.ParseInt(v.s, 10, bits)
		}
		if err != nil {
			lo, hi := "0", strconv.FormatUint(math.MaxUint64>>(64-bits), 10)
			if name[0] == 's' {
				lo = strconv.FormatInt(-1<<(bits-1), 10)
				hi = strconv.FormatInt(1<<(bits-1)-1, 10)
			}
			return fmt.Errorf("%s: %s is out of range for %s [%s, %s]", path, v.s, name, lo, hi)
		}
	default:
		return fmt.Errorf("%s: unknown primitive %s", path, name)
	}
	return nil
}
