//go:build dshr_fault

package main

import "os"

// A fault-injection build: every decide call exits the module, which the host
// sees as a trap (the instance is finished). configure still works, so the
// plugin activates normally and fails only where a decision is needed.
func init() {
	faultHook = func(export string) {
		if export == "decide" {
			os.Exit(3)
		}
	}
}
