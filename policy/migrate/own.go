package migrate

// nested are our keys that hold keys of their own: an existing row's are
// carried over one by one, so an old row's key inside them (tools.retry,
// quota.defaultEnabled) is checked against each.
var nested = map[string]bool{"tools": true, "stall": true, "slow": true, "quota": true, "shared": true}

// own is our own row: its keys carry over unchanged. An unknown one too:
// the module's check of the printed row names it.
var own = plugin{
	name: "dsh-resilience",
	ids:  []string{"resilience"},
	any:  ownKey,
}

// ownKey is what our row's key becomes, and a warning for each secret
// written out in it (secret.go).
func ownKey(key string, v Value) []out {
	outs := ownValue(key, v)
	for _, w := range ownSecrets(key, v) {
		outs = append(outs, out{note: w})
	}
	return outs
}

func ownValue(key string, v Value) []out {
	const note = "already ours"
	if !nested[key] || !v.isMap() {
		return to(Path{key}, v, note)
	}
	if len(v.Obj) == 0 {
		return to(Path{key}, Obj(), note)
	}
	outs := make([]out, 0, len(v.Obj))
	for _, m := range v.Obj {
		outs = append(outs, out{to: Path{key, m.Key}, value: m.Val, note: note, part: key + "." + m.Key, old: m.Val})
	}
	return outs
}
