package migrate

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// The old values' readers. Each refuses what the old plugin refused (or what
// no key of ours could take) with the words the table's users know, and
// passes a `!!js` expression through as written: only the host evaluates it.

// whole reads a whole number of at least min.
func whole(v Value, min float64) (Value, error) { return number(v, min, false) }

// number reads a number of at least min; floor rounds a fraction down where
// the old plugin itself did (tool-retry's maxAttempts), else a fraction is refused.
func number(v Value, min float64, floor bool) (Value, error) {
	if v.IsExpr() {
		return v, nil
	}
	if v.Kind != Number || math.IsInf(v.Num, 0) || math.IsNaN(v.Num) || v.Num < min {
		return v, fmt.Errorf("must be a number of at least %s, not %s", jsNumber(min), v.JSON())
	}
	if !floor && !isWhole(v.Num) {
		return v, fmt.Errorf("must be a whole number, not %s", jsNumber(v.Num))
	}
	return Num(math.Floor(v.Num)), nil
}

// atLeastOne is n, raised to 1 (our bound) unless it is an expression.
func atLeastOne(n Value) Value {
	if n.IsExpr() {
		return n
	}
	return Num(math.Max(1, n.Num))
}

// boolean reads true or false.
func boolean(v Value) (Value, error) {
	if v.IsExpr() || v.Kind == Bool {
		return v, nil
	}
	return v, fmt.Errorf("must be true or false, not %s", v.JSON())
}

// isTrue is a boolean's value; an expression is neither true nor false.
func isTrue(v Value) bool { return v.Kind == Bool && v.Bool }

// exprSwitch is the line for an expression where the value decides what the
// key becomes: the host evaluates it only when the row loads, so no migration
// can pick the branch.
func exprSwitch(key string) []out {
	return none("a !!js value here is not migrated: whether it is true decides what it becomes; set " + key + " by hand")
}

func nonEmpty(v Value, what string) (string, error) {
	if v.Kind != String || jsTrim(v.Str) == "" {
		return "", errors.New(what + " must be a non-empty string")
	}
	return v.Str, nil
}

// channels reads [{provider, model}] or "provider/model" strings; extra
// names the keys a channel may have beside them (a pool route's
// reasoningEffort).
func channels(v Value, extra ...string) (Value, error) {
	if v.Kind != Array {
		return v, errors.New("must be a list of {provider, model}")
	}
	list := make([]Value, 0, len(v.Arr))
	for i, c := range v.Arr {
		ch, err := channel(c, i, extra)
		if err != nil {
			return v, err
		}
		list = append(list, ch)
	}
	return List(list...), nil
}

func channel(c Value, i int, extra []string) (Value, error) {
	if c.Kind == String {
		// provider/model: the first slash splits, as a model name may hold more.
		slash := strings.IndexByte(c.Str, '/')
		if slash <= 0 || slash == len(c.Str)-1 {
			return c, fmt.Errorf("[%d]: \"%s\" is not provider/model", i, c.Str)
		}
		return Obj(M("provider", Str(c.Str[:slash])), M("model", Str(c.Str[slash+1:]))), nil
	}
	if c.Kind != Object {
		return c, fmt.Errorf("[%d] must be {provider, model}", i)
	}
	for _, m := range c.Obj {
		if m.Key != "provider" && m.Key != "model" && !slices.Contains(extra, m.Key) {
			return c, fmt.Errorf("[%d].%s: no equivalent (a channel is a provider and a model)", i, m.Key)
		}
	}
	provider, _ := c.Get("provider")
	model, _ := c.Get("model")
	p, err := nonEmpty(provider, fmt.Sprintf("[%d].provider", i))
	if err != nil {
		return c, err
	}
	mo, err := nonEmpty(model, fmt.Sprintf("[%d].model", i))
	if err != nil {
		return c, err
	}
	ch := Obj(M("provider", Str(p)), M("model", Str(mo)))
	if effort, ok := c.Get("reasoningEffort"); ok && slices.Contains(extra, "reasoningEffort") {
		e, err := nonEmpty(effort, fmt.Sprintf("[%d].reasoningEffort", i))
		if err != nil {
			return c, err
		}
		ch.Obj = append(ch.Obj, M("reasoningEffort", Str(e)))
	}
	return ch, nil
}

// jsTrim trims what JS's String.prototype.trim does: white space (the Zs
// category, tab, vertical tab, form feed, the byte order mark) and line
// terminators. Go's TrimSpace differs at U+0085 and U+FEFF.
func jsTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		switch r {
		case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
			return true
		}
		return r >= 0x2000 && r <= 0x200a
	})
}
