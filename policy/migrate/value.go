package migrate

// Kind is a JSON value's type.
type Kind uint8

const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// Value is one JSON value of a row's config, as the host's YAML reader made
// it. Objects keep their members in the order written: the printed row and
// the table follow the user's order, and a migration reads the same twice.
type Value struct {
	Kind Kind
	Bool bool
	Num  float64
	Str  string
	Arr  []Value
	Obj  []Member
}

// Member is one key of an object. Keys are unique within an object (the
// codec keeps the last of duplicates, as JSON.parse does).
type Member struct {
	Key string
	Val Value
}

// Str, Num, Boolean, List and Obj build values.
func Str(s string) Value         { return Value{Kind: String, Str: s} }
func Num(f float64) Value        { return Value{Kind: Number, Num: f} }
func Boolean(b bool) Value       { return Value{Kind: Bool, Bool: b} }
func List(vs ...Value) Value     { return Value{Kind: Array, Arr: vs} }
func Obj(ms ...Member) Value     { return Value{Kind: Object, Obj: ms} }
func M(k string, v Value) Member { return Member{k, v} }

// exprKey marks a `!!js` scalar: the host's YAML reader turns
// `!!js "text"` into {"__jsExpr": "text"}, which the host evaluates at
// activation. A migration carries it over as written.
const exprKey = "__jsExpr"

// Get is the member under key.
func (v Value) Get(key string) (Value, bool) {
	if v.Kind != Object {
		return Value{}, false
	}
	for _, m := range v.Obj {
		if m.Key == key {
			return m.Val, true
		}
	}
	return Value{}, false
}

// IsExpr reports whether v is a `!!js` expression.
func (v Value) IsExpr() bool {
	e, ok := v.Get(exprKey)
	return ok && e.Kind == String
}

// isMap reports whether v is an object that holds keys, not an expression.
func (v Value) isMap() bool { return v.Kind == Object && !v.IsExpr() }

// Set puts x under key: in place when the key is there, else last.
func (v *Value) Set(key string, x Value) {
	for i := range v.Obj {
		if v.Obj[i].Key == key {
			v.Obj[i].Val = x
			return
		}
	}
	v.Obj = append(v.Obj, Member{key, x})
}

// clone copies v deeply: the row being built is changed in place, and the
// table must keep each value as its key set it.
func (v Value) clone() Value {
	switch v.Kind {
	case Array:
		arr := make([]Value, len(v.Arr))
		for i, e := range v.Arr {
			arr[i] = e.clone()
		}
		v.Arr = arr
	case Object:
		obj := make([]Member, len(v.Obj))
		for i, m := range v.Obj {
			obj[i] = Member{m.Key, m.Val.clone()}
		}
		v.Obj = obj
	}
	return v
}

// integer reports whether v is a finite whole number (Number.isInteger).
func (v Value) integer() bool {
	return v.Kind == Number && isWhole(v.Num)
}
