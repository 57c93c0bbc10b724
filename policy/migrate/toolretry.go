package migrate

import "errors"

// dsh-plugin-tool-retry: repeat the tool calls the row allow-lists.
var toolRetry = plugin{
	name: "dsh-plugin-tool-retry",
	ids:  []string{"tool-retry", "dsh-plugin-tool-retry"},
	keys: map[string]keyMap{
		"retryTools": func(v, _ Value) ([]out, error) {
			if v.Kind != Array {
				return nil, errors.New("must be a list of tool names")
			}
			for _, p := range v.Arr {
				if p.Kind != String {
					return nil, errors.New("must be a list of tool names")
				}
			}
			for _, p := range v.Arr {
				if p.Str == "*" {
					return nil, errors.New(`"*" would repeat every tool, writes included: name the tools that are safe to run twice`)
				}
			}
			return to(Path{"tools", "retry"}, v, "names, or a prefix ending in *"), nil
		},
		"maxAttempts": func(v, _ Value) ([]out, error) {
			n, err := number(v, 0, true) // the plugin floored a fraction itself
			return to(Path{"tools", "maxAttempts"}, atLeastOne(n), "attempts per call, the first included"), err
		},
		"backoffMs": func(v, _ Value) ([]out, error) {
			n, err := whole(v, 0)
			if err != nil {
				return nil, err
			}
			note := "first wait's ceiling (full jitter), doubling"
			if n.Kind == Number && n.Num == 0 {
				note = "at least 1 ms here"
			}
			return to(Path{"tools", "backoffMs"}, atLeastOne(n), note), nil
		},
		"maxBackoffMs": func(v, _ Value) ([]out, error) {
			n, err := whole(v, 0)
			return to(Path{"tools", "maxBackoffMs"}, atLeastOne(n), "cap of the doubling"), err
		},
		"retryDeadlineMs": func(v, _ Value) ([]out, error) {
			n, err := whole(v, 0)
			if err != nil {
				return nil, err
			}
			if n.Kind == Number && n.Num == 0 {
				return to(Path{"tools", "retryDeadlineMs"}, Num(86_400_000),
					"0 (no deadline) is refused here: a day, the longest, bounds a repeat that hangs"), nil
			}
			return to(Path{"tools", "retryDeadlineMs"}, n, "bounds each repeated attempt"), nil
		},
	},
}
