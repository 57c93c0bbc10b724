package migrate

import "math"

// fixRanges keeps a row inside bounds our keys have together
// (maxCooldownMs >= cooldownMs, backoffMaxMs >= backoffBaseMs,
// tools.maxBackoffMs >= tools.backoffMs). An old row that set one past our
// default of the other gets the other raised with it, in the table, rather
// than a row the module refuses.
func fixRanges(res *Result) {
	row := &res.Row
	raise := func(at *Value, from string, old Value, to Path, value Value, why string) {
		at.Set(to[len(to)-1], value)
		o := old
		res.Table = append(res.Table, Line{Plugin: "dsh-resilience", ID: "resilience", Key: "(from " + from + ")",
			Value: &o, To: to, ToValue: value, Note: why})
	}
	if c, ok := row.Get("cooldownMs"); ok && c.integer() && c.Num > 1_800_000 && absent(*row, "maxCooldownMs") {
		raise(row, "cooldownMs", c, Path{"maxCooldownMs"}, c,
			"our cap of the doubling cooldown (30 min by default) may not be below cooldownMs")
	}
	if b, ok := row.Get("backoffMaxMs"); ok && b.integer() && b.Num < 1000 && absent(*row, "backoffBaseMs") {
		raise(row, "backoffMaxMs", b, Path{"backoffBaseMs"}, Num(math.Max(1, b.Num)),
			"our first wait (1 s by default) may not be above backoffMaxMs")
	}
	for i := range row.Obj {
		tools := &row.Obj[i].Val
		if row.Obj[i].Key != "tools" || !tools.isMap() {
			continue
		}
		if b, ok := tools.Get("backoffMs"); ok && b.integer() && b.Num > 8000 && absent(*tools, "maxBackoffMs") {
			raise(tools, "tools.backoffMs", b, Path{"tools", "maxBackoffMs"}, b,
				"the cap (8 s by default) may not be below tools.backoffMs")
		}
	}
}

func absent(v Value, key string) bool {
	_, ok := v.Get(key)
	return !ok
}
