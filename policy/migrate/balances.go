package migrate

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// balanceKeys are the keys of a balance script, the quota plugin's and ours alike.
var balanceKeys = []string{"provider", "script", "timeoutMs", "refreshMs", "apiKeyEnv", "env", "minimumRemaining", "unit"}

// balances reads the quota plugin's balance scripts, a list or a map of
// provider to script, into our list; warnings name the secrets written out
// in them.
func balances(v Value) (Value, []string, error) {
	var list []Value
	switch {
	case v.Kind == Array:
		list = v.Arr
	case v.isMap():
		for _, m := range v.Obj {
			if !m.Val.isMap() {
				list = append(list, m.Val) // refused below, as a list's would be
				continue
			}
			// The map's key names the provider unless the script names its own.
			b := Obj(M("provider", Str(m.Key)))
			for _, k := range m.Val.Obj {
				b.Set(k.Key, k.Val)
			}
			list = append(list, b)
		}
	default:
		return v, nil, errors.New("must be a list of balance scripts, or a map of provider to script")
	}
	out := make([]Value, 0, len(list))
	var warnings []string
	for i, b := range list {
		at := fmt.Sprintf("[%d]", i)
		if b.Kind != Object {
			return v, nil, errors.New(at + " must be an object")
		}
		for _, m := range b.Obj {
			if !slices.Contains(balanceKeys, m.Key) {
				return v, nil, fmt.Errorf("%s.%s: no equivalent (known: %s)", at, m.Key, strings.Join(balanceKeys, ", "))
			}
		}
		script, _ := b.Get("script")
		argv, err := scriptArgv(script, at)
		if err != nil {
			return v, nil, err
		}
		b = b.clone()
		b.Set("script", argv)
		if env, ok := b.Get("env"); ok {
			b.Set("env", envList(env))
		}
		warnings = append(warnings, secrets(b, at)...)
		out = append(out, b)
	}
	return List(out...), warnings, nil
}

// plainArgs reports whether line is a one-line script of plain words
// (letters, digits and _ . / @ : = + , -, separated by spaces): split into
// argv, it runs the same as it did through a shell. A loop, not a regular
// expression: the regexp package's code and its compiled pattern would live
// in every policy instance, for a check migrate makes once.
func plainArgs(line string) bool {
	if line == "" || line[0] == ' ' || line[len(line)-1] == ' ' {
		return false
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		word := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_./@:=+,-", c) >= 0
		if !word && c != ' ' {
			return false
		}
	}
	return true
}

// scriptArgv is a script as argv. A line a shell would interpret (pipes,
// quotes, $) is refused: our scripts run as argv, never through a shell.
func scriptArgv(script Value, at string) (Value, error) {
	if script.Kind == Array {
		return script, nil
	}
	if script.Kind == String {
		if line := jsTrim(script.Str); plainArgs(line) {
			var argv []Value
			for _, w := range strings.Split(line, " ") {
				if w != "" {
					argv = append(argv, Str(w))
				}
			}
			return List(argv...), nil
		}
	}
	return script, errors.New(at + ".script: give it as argv, [program, args...]: a shell line is not run")
}

// envList is a script's env as ours: a list of {name, value}. The quota
// plugin's map of name to value becomes that list in its order; anything
// else is carried as written, for the module to judge.
func envList(env Value) Value {
	if !env.isMap() {
		return env
	}
	list := make([]Value, 0, len(env.Obj))
	for _, m := range env.Obj {
		list = append(list, Obj(M("name", Str(m.Key)), M("value", m.Val)))
	}
	return List(list...)
}
