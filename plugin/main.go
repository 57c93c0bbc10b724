// Command plugin is the dsh-resilience policy module: an Extism plugin built
// with standard Go for wasip1 (-buildmode=c-shared, so the host calls
// _initialize once, then the exports).
//
// Each export reads its JSON parameter from the Extism input, runs the codec,
// and writes the JSON result to the Extism output, or the error text to the
// Extism error and returns 1. A panic anywhere becomes such an error rather
// than a trap, so the instance stays usable; the host still recreates an
// instance after any trap it does see.
package main

import (
	"fmt"

	"github.com/dsh-resilience/dsh-resilience/plugin/codec"
	"github.com/extism/go-pdk"
)

// module holds the policy state for the life of the instance. An instance is
// single-threaded, so nothing else guards it.
var module codec.Module

// faultHook is nil in every shipped build. A test build (tag dshr_fault) sets
// it to make exports trap, so the shim's fail-open path is proven against a
// real trap in the real host rather than a stand-in.
var faultHook func(export string)

func call(export string) (rc int32) {
	if faultHook != nil {
		faultHook(export)
	}
	defer func() {
		if r := recover(); r != nil {
			pdk.SetErrorString(fmt.Sprintf("%s: internal error: %v", export, r))
			rc = 1
		}
	}()
	out, err := module.Call(export, pdk.Input())
	if err != nil {
		pdk.SetErrorString(export + ": " + err.Error())
		return 1
	}
	pdk.Output(out)
	return 0
}

//go:wasmexport configure
func configure() int32 { return call("configure") }

//go:wasmexport decide
func decide() int32 { return call("decide") }

//go:wasmexport snapshot
func snapshot() int32 { return call("snapshot") }

//go:wasmexport restore
func restore() int32 { return call("restore") }

//go:wasmexport inspect
func inspect() int32 { return call("inspect") }

// main is required by the toolchain but never runs in c-shared mode.
func main() {}
