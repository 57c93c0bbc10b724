package codec

import (
	"fmt"
	"math"
	"slices"

	"github.com/tidwall/gjson"
)

// decoder reads JSON strictly: unknown keys and wrong types are errors that
// name the path, so a bad config row tells the operator which key is wrong.
// It records the first error and then reads zero values, which keeps the
// decoding code linear.
type decoder struct {
	err    error
	prefix string // "config key" or "input"
	// strictNull refuses an explicit null where a number belongs. A config
	// row's `~`, `.nan` or `.inf` (the shim sends the latter two as the
	// strings "NaN" and "Infinity") is a mistake to name, not a request for
	// the default; leaving the key out asks for that.
	strictNull bool
	// hostRetries, when set, keeps the last host retry policy decoded.
	hostRetries *hostRetryCache
}

func (d *decoder) fail(path, format string, a ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%s %q: %s", d.prefix, path, fmt.Sprintf(format, a...))
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// members is one object's values under its allowed keys, read in a single
// pass (decoder.fields). A hot decoder looks its keys up here instead of with
// gjson's Get, which rescans the object's text from its start for every key.
// On the simulator's recorded bad day, replayed natively, decoding was half
// of a decision's time and those rescans about half of that; in the guest a
// decision runs about ten times slower than natively, so a host waits for them.
type members struct {
	allowed []string
	vals    [maxMembers]gjson.Result
}

// maxMembers bounds the keys a members holds; longer key lists (the config
// row's) go through object and Get, off the hot path.
const maxMembers = 12 // stream-check-event has 11

// get is the member under key k (a key of allowed), or the zero Result.
func (m *members) get(k string) gjson.Result {
	for i, a := range m.allowed {
		if a == k {
			return m.vals[i]
		}
	}
	return gjson.Result{}
}

// fields is object (the same checks, the same errors) that also keeps the
// members: the first of duplicate keys, as Get would find. allowed holds at
// most maxMembers keys.
func (d *decoder) fields(v gjson.Result, path string, allowed []string) (m members, ok bool) {
	if len(allowed) > maxMembers {
		panic("codec: fields takes at most maxMembers keys")
	}
	m.allowed = allowed
	if !v.IsObject() {
		where := path
		if where == "" {
			where = "(root)"
		}
		d.fail(where, "must be an object")
		return m, false
	}
	v.ForEach(func(k, val gjson.Result) bool {
		i := slices.Index(m.allowed, k.String())
		if i < 0 {
			d.fail(join(path, k.String()), "unknown key (known: %v)", allowed)
			return false
		}
		if !m.vals[i].Exists() {
			m.vals[i] = val
		}
		return true
	})
	return m, d.err == nil
}

// object checks that v is an object whose keys are all allowed.
func (d *decoder) object(v gjson.Result, path string, allowed ...string) bool {
	if !v.IsObject() {
		where := path
		if where == "" {
			where = "(root)"
		}
		d.fail(where, "must be an object")
		return false
	}
	v.ForEach(func(k, _ gjson.Result) bool {
		if !slices.Contains(allowed, k.String()) {
			d.fail(join(path, k.String()), "unknown key (known: %v)", allowed)
			return false
		}
		return true
	})
	return d.err == nil
}

func present(v gjson.Result) bool { return v.Exists() && v.Type != gjson.Null }

func (d *decoder) str(v gjson.Result, path string, required bool) string {
	if !present(v) {
		if required {
			d.fail(path, "is required")
		}
		return ""
	}
	if v.Type != gjson.String {
		d.fail(path, "must be a string")
		return ""
	}
	return v.Str
}

// uint reads a non-negative integer no larger than max.
func (d *decoder) uint(v gjson.Result, path string, required bool, max uint64) (uint64, bool) {
	if d.strictNull && v.Exists() && v.Type == gjson.Null {
		d.fail(path, "must be an integer between 0 and %d, not null (leave the key out for its default)", max)
		return 0, false
	}
	if v.Type == gjson.String && (v.Str == "NaN" || v.Str == "Infinity" || v.Str == "-Infinity") {
		d.fail(path, "must be an integer between 0 and %d, not %s", max, v.Str)
		return 0, false
	}
	if !present(v) {
		if required {
			d.fail(path, "is required")
		}
		return 0, false
	}
	// v.Uint parses the raw text, so values near 2^53 are judged exactly; the
	// float checks catch fractions and negatives, which Uint would truncate.
	if v.Type != gjson.Number || v.Num < 0 || v.Num != math.Trunc(v.Num) || v.Num > float64(max) || v.Uint() > max {
		d.fail(path, "must be an integer between 0 and %d", max)
		return 0, false
	}
	return v.Uint(), true
}

func (d *decoder) boolean(v gjson.Result, path string) bool {
	if !present(v) {
		return false
	}
	if v.Type != gjson.True && v.Type != gjson.False {
		d.fail(path, "must be a boolean")
		return false
	}
	return v.Bool()
}

func (d *decoder) array(v gjson.Result, path string, required bool) []gjson.Result {
	if !present(v) {
		if required {
			d.fail(path, "is required")
		}
		return nil
	}
	if !v.IsArray() {
		d.fail(path, "must be an array")
		return nil
	}
	return v.Array()
}

func (d *decoder) oneOf(v gjson.Result, path string, required bool, allowed ...string) string {
	s := d.str(v, path, required)
	if present(v) && v.Type == gjson.String && !slices.Contains(allowed, s) {
		// A copy, so that allowed does not escape: the hot request-error
		// decoding then does not allocate its variadic slice per call.
		d.fail(path, "must be one of %v, not %q", slices.Clone(allowed), s)
	}
	return s
}

// strAt and uintAt read path.key, joining the path only when there is an
// error to name it in: the hot decisions (request, request-error) then
// decode without building a string per field.
func (d *decoder) strAt(v gjson.Result, path, key string, required bool) string {
	if v.Type == gjson.String {
		return v.Str
	}
	return d.str(v, join(path, key), required)
}

func (d *decoder) uintAt(v gjson.Result, path, key string, required bool, max uint64) (uint64, bool) {
	if !present(v) && !required {
		return 0, false
	}
	if v.Type == gjson.Number && v.Num >= 0 && v.Num == math.Trunc(v.Num) && v.Num <= float64(max) && v.Uint() <= max {
		return v.Uint(), true
	}
	return d.uint(v, join(path, key), required, max)
}
