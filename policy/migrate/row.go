package migrate

import (
	"strconv"
	"strings"
)

// Path is one of our keys, from the row's top: ["quota", "longTermDelayMs"].
// A path, not a dotted string: a key may hold a dot, and it stays one key.
type Path []string

// String is the path as the table shows it: quota.longTermDelayMs.
func (p Path) String() string { return strings.Join(p, ".") }

// key is the path as a map key: each part with its length, so no part's
// text can pass for two.
func (p Path) key() string {
	var b strings.Builder
	for _, k := range p {
		b.WriteString(strconv.Itoa(len(k)))
		b.WriteByte(':')
		b.WriteString(k)
	}
	return b.String()
}

// setting is one of our keys set by an old key.
type setting struct {
	path  Path
	value Value
	from  string // `dsh-daruma key "channels"`
}

// claim records s unless it contradicts a setting before it, and then says
// why. Two settings of one path must agree; a setting of a key inside
// another's value (tools.retry inside tools) must agree with what that value
// holds there, and a value that is not a map of keys (an expression, a list)
// holds nothing inside it: both would otherwise reach the row, and one
// would silently win. Settings are found by path, not by a scan: an own row
// may hold thousands of keys.
func (m *migration) claim(s setting) string {
	if m.at == nil {
		m.at, m.under = map[string]int{}, map[string][]int{}
	}
	key := s.path.key()
	if i, ok := m.at[key]; ok {
		prior := m.set[i]
		if prior.value.JSON() == s.value.JSON() {
			return ""
		}
		return s.from + " sets " + s.path.String() + " to " + s.value.JSON() + ", but " + prior.from + " sets it to " + prior.value.JSON() + ": keep one of them"
	}
	for n := 1; n < len(s.path); n++ { // settings around s
		if i, ok := m.at[s.path[:n].key()]; ok && !agrees(m.set[i].value, s.path[n:], s.value) {
			return m.contradiction(s, m.set[i])
		}
	}
	for _, i := range m.under[key] { // settings inside s
		if !agrees(s.value, m.set[i].path[len(s.path):], m.set[i].value) {
			return m.contradiction(s, m.set[i])
		}
	}
	m.at[key] = len(m.set)
	for n := 1; n < len(s.path); n++ {
		k := s.path[:n].key()
		m.under[k] = append(m.under[k], len(m.set))
	}
	m.set = append(m.set, s)
	return ""
}

func (m *migration) contradiction(s, prior setting) string {
	return s.from + " sets " + s.path.String() + " to " + s.value.JSON() + ", but " + prior.from + " sets " + prior.path.String() + " to " + prior.value.JSON() + ": keep one of them"
}

// agrees reports whether setting rest inside outer leaves outer as it was
// or only adds to it.
func agrees(outer Value, rest Path, inner Value) bool {
	at := outer
	for _, k := range rest {
		if !at.isMap() {
			return false
		}
		next, ok := at.Get(k)
		if !ok {
			return true
		}
		at = next
	}
	return at.JSON() == inner.JSON()
}

// build writes the settings into one row, in the order they were first set.
// A map set at a path and keys set inside it merge: an empty map is a marker
// ("the quota rules are on") that never hides keys set beside it.
func (m *migration) build() Value {
	row := Obj()
	for _, s := range m.set {
		at := &row
		for _, k := range s.path[:len(s.path)-1] {
			at = child(at, k)
		}
		last := s.path[len(s.path)-1]
		v := s.value.clone()
		if old, ok := at.Get(last); ok && old.isMap() && v.isMap() {
			for _, mem := range v.Obj {
				old.Set(mem.Key, mem.Val)
			}
			v = old
		}
		at.Set(last, v)
	}
	return row
}

// child is the map under key in at, made when absent. claim has made sure
// that what is there is a map.
func child(at *Value, key string) *Value {
	for i := range at.Obj {
		if at.Obj[i].Key == key {
			return &at.Obj[i].Val
		}
	}
	at.Obj = append(at.Obj, Member{key, Obj()})
	return &at.Obj[len(at.Obj)-1].Val
}
