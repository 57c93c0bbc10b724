// Command preinit writes a Go reactor module with its start baked in
// (testhost/preinit): `preinit raw.wasm out.wasm`. The Makefile runs it on
// every build of the module the package ships.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/dsh-resilience/dsh-resilience/testhost/preinit"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: preinit raw.wasm out.wasm")
		os.Exit(2)
	}
	raw, err := os.ReadFile(os.Args[1])
	if err == nil {
		var baked []byte
		if baked, err = preinit.Module(context.Background(), raw); err == nil {
			err = os.WriteFile(os.Args[2], baked, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "preinit:", err)
		os.Exit(1)
	}
}
