// Package preinit bakes a Go reactor module's start into the module: it runs
// `_initialize` (the Go runtime's start and every package's init) once, at
// build time, and writes a module whose memory and globals begin where that
// start left them, and whose `_initialize` does nothing.
//
// Why: in Node, a module's functions are compiled on their first call, on the
// calling thread. A first run of the plugin brings the module up before its
// first request, and the Go runtime's start was the largest part of that
// bring-up: ~14 ms of the host's main thread, almost all of it compiling the
// runtime's own functions, which then never run again (RATIONALE.md,
// start-up). A baked module starts from memory, as any data segment.
//
// It holds because a reactor's start ends with nothing on the WebAssembly
// call stack: when `_initialize` returns, the Go runtime's whole state is in
// linear memory and in the module's eight globals (SP, CTXT, g, RET0-3,
// PAUSE), and the table is never written. What the start read from its
// surroundings is baked too, so the start is run in a fixed, empty world: no
// arguments or environment (the plugin's kernel gives none either), a fixed
// clock and a fixed random stream. The runtime's random seeds (map hashing)
// are then the same in every process; the policy draws no random numbers
// and orders nothing by a map's iteration (its tests run it twice and compare).
package preinit

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// InitExport is the export a Go reactor module is started with.
const InitExport = "_initialize"

// globalExport names the export the start's run reads global i through.
func globalExport(i int) string { return fmt.Sprintf("preinit.global.%d", i) }

// layout is what Module needs to know of a module's sections.
type layout struct {
	funcImports   int
	globalImports int
	definedFuncs  int
	globals       []byte // each defined global's value type
	voidType      int    // the index of the type () -> (), or -1
	types         int
	initialize    bool
}

// Module returns raw with its start baked in (see the package comment).
func Module(ctx context.Context, raw []byte) ([]byte, error) {
	secs, err := parseSections(raw)
	if err != nil {
		return nil, err
	}
	l, err := read(secs)
	if err != nil {
		return nil, err
	}
	if !l.initialize {
		return nil, fmt.Errorf("the module exports no %s: not a reactor", InitExport)
	}
	mem, globals, err := start(ctx, encodeSections(withGlobalExports(secs, l)))
	if err != nil {
		return nil, err
	}
	return encodeSections(bake(secs, l, mem, globals)), nil
}

// read walks the sections Module rewrites.
func read(secs []section) (layout, error) {
	l := layout{voidType: -1}
	for _, s := range secs {
		r := &reader{b: s.body}
		switch s.id {
		case secType:
			l.types = int(r.u32())
			for i := 0; i < l.types && r.err == nil; i++ {
				r.byte() // 0x60
				params := r.u32()
				r.bytes(int(params))
				results := r.u32()
				r.bytes(int(results))
				if params == 0 && results == 0 && l.voidType < 0 {
					l.voidType = i
				}
			}
		case secImport:
			for n := r.u32(); n > 0 && r.err == nil; n-- {
				r.name()
				r.name()
				switch kind := r.byte(); kind {
				case 0: // func
					r.u32()
					l.funcImports++
				case 1: // table
					r.byte()
					if r.byte()&1 == 1 {
						r.u32()
					}
					r.u32()
				case 2: // memory
					if r.byte()&1 == 1 {
						r.u32()
					}
					r.u32()
				case 3: // global
					r.bytes(2)
					l.globalImports++
				default:
					return l, fmt.Errorf("import kind %d", kind)
				}
			}
		case secFunction:
			l.definedFuncs = int(r.u32())
		case secGlobal:
			for n := r.u32(); n > 0 && r.err == nil; n-- {
				l.globals = append(l.globals, r.byte())
				r.byte() // mutability
				r.constExpr()
			}
		case secData:
			// Only active segments: a passive one is copied by the code when
			// it runs (memory.init), and a baked memory keeps no segment of it.
			for n := r.u32(); n > 0 && r.err == nil; n-- {
				if flags := r.u32(); flags != 0 {
					return l, fmt.Errorf("data segment with flags %d: only active segments of memory 0 can be baked", flags)
				}
				r.constExpr()
				r.bytes(int(r.u32()))
			}
		case secExport:
			for n := r.u32(); n > 0 && r.err == nil; n-- {
				name := r.name()
				kind := r.byte()
				r.u32()
				if name == InitExport && kind == 0 {
					l.initialize = true
				}
			}
		}
		if r.err != nil {
			return l, fmt.Errorf("section %d: %w", s.id, r.err)
		}
	}
	return l, nil
}

// withGlobalExports exports every defined global, so the start's run can read them.
func withGlobalExports(secs []section, l layout) []section {
	out := append([]section(nil), secs...)
	for i, s := range out {
		if s.id != secExport {
			continue
		}
		r := &reader{b: s.body}
		n := int(r.u32())
		body := appendU32(nil, uint32(n+len(l.globals)))
		body = append(body, s.body[r.p:]...)
		for g := range l.globals {
			body = appendName(body, globalExport(g))
			body = append(body, 3)
			body = appendU32(body, uint32(l.globalImports+g))
		}
		out[i].body = body
	}
	return out
}

// start runs the module's start in a fixed, empty world and returns its memory and globals.
func start(ctx context.Context, module []byte) ([]byte, []uint64, error) {
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		return nil, nil, err
	}
	compiled, err := rt.CompileModule(ctx, module)
	if err != nil {
		return nil, nil, err
	}
	if err := refuseImports(ctx, rt, compiled); err != nil {
		return nil, nil, err
	}
	var ticks uint64
	clock := func() int64 { ticks++; return int64(ticks) * 1_000 }
	cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions().
		WithRandSource(rand.NewChaCha8([32]byte{'d', 's', 'h', 'r'})).
		WithNanotime(clock, 1).
		WithWalltime(func() (int64, int32) { n := clock(); return n / 1e9, int32(n % 1e9) }, 1)
	mod, err := rt.InstantiateModule(ctx, compiled, cfg)
	if err != nil {
		return nil, nil, err
	}
	if _, err := mod.ExportedFunction(InitExport).Call(ctx); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", InitExport, err)
	}
	mem, ok := mod.Memory().Read(0, mod.Memory().Size())
	if !ok {
		return nil, nil, errors.New("memory unreadable")
	}
	var globals []uint64
	for i := 0; ; i++ {
		g := mod.ExportedGlobal(globalExport(i))
		if g == nil {
			break
		}
		globals = append(globals, g.Get())
	}
	return append([]byte(nil), mem...), globals, nil
}

// refuseImports gives every non-WASI import a function that fails: a start
// that calls the host could not be baked, and says which call it made.
func refuseImports(ctx context.Context, rt wazero.Runtime, compiled wazero.CompiledModule) error {
	hosts := map[string]wazero.HostModuleBuilder{}
	for _, def := range compiled.ImportedFunctions() {
		mod, name, _ := def.Import()
		if mod == wasi_snapshot_preview1.ModuleName {
			continue
		}
		if hosts[mod] == nil {
			hosts[mod] = rt.NewHostModuleBuilder(mod)
		}
		call := mod + "." + name
		hosts[mod].NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(context.Context, api.Module, []uint64) {
			panic(fmt.Errorf("the start called the host (%s): it cannot be baked", call))
		}), def.ParamTypes(), def.ResultTypes()).Export(name)
	}
	for _, h := range hosts {
		if _, err := h.Instantiate(ctx); err != nil {
			return err
		}
	}
	return nil
}

// bake rewrites the module: memory's minimum and contents, the globals'
// initial values, and `_initialize` pointed at a new function that returns.
func bake(secs []section, l layout, mem []byte, globals []uint64) []section {
	out := make([]section, 0, len(secs)+1)
	if !hasSection(secs, secData) { // a start may write where no data was: the section comes after the code
		for i, s := range secs {
			if s.id == secCode {
				secs = append(secs[:i+1:i+1], append([]section{{id: secData}}, secs[i+1:]...)...)
				break
			}
		}
	}
	noop := uint32(l.funcImports + l.definedFuncs)
	voidType := l.voidType
	if voidType < 0 {
		voidType = l.types
	}
	for _, s := range secs {
		r := &reader{b: s.body}
		switch s.id {
		case secType:
			if l.voidType < 0 {
				s.body = append(append(appendU32(nil, uint32(l.types+1)), s.body[lenU32(r):]...), 0x60, 0, 0)
			}
		case secFunction:
			r.u32()
			s.body = append(appendU32(nil, uint32(l.definedFuncs+1)), s.body[r.p:]...)
			s.body = appendU32(s.body, uint32(voidType))
		case secMemory:
			r.u32() // one memory
			flags := r.byte()
			r.u32() // the old minimum
			body := append(appendU32(nil, 1), flags)
			body = appendU32(body, uint32(len(mem)/65536))
			s.body = append(body, s.body[r.p:]...) // the maximum, if any
		case secGlobal:
			s.body = globalSection(s.body, globals)
		case secExport:
			s.body = exportSection(s.body, noop)
		case secCode:
			r.u32()
			s.body = append(appendU32(nil, uint32(l.definedFuncs+1)), s.body[r.p:]...)
			s.body = append(s.body, 2, 0, 0x0b) // a body of two bytes: no locals, end
		case secData:
			segs := segments(mem)
			body := appendU32(nil, uint32(len(segs)))
			for _, sg := range segs {
				body = append(body, 0, 0x41) // active, memory 0, i32.const
				body = appendS64(body, int64(int32(uint32(sg.at))))
				body = append(body, 0x0b)
				body = appendU32(body, uint32(len(sg.bytes)))
				body = append(body, sg.bytes...)
			}
			s.body = body
		case secDataCount:
			s.body = appendU32(nil, uint32(len(segments(mem))))
		}
		out = append(out, s)
	}
	return out
}

func hasSection(secs []section, id byte) bool {
	for _, s := range secs {
		if s.id == id {
			return true
		}
	}
	return false
}

// lenU32 is the length of the LEB128 count r starts with.
func lenU32(r *reader) int {
	r.u32()
	return r.p
}

// globalSection writes each global with the value the start left in it.
func globalSection(old []byte, globals []uint64) []byte {
	r := &reader{b: old}
	n := int(r.u32())
	body := appendU32(nil, uint32(n))
	for i := 0; i < n; i++ {
		typ := r.byte()
		mut := r.byte()
		r.constExpr()
		body = append(body, typ, mut)
		v := globals[i]
		switch typ {
		case 0x7f: // i32
			body = appendS64(append(body, 0x41), int64(int32(uint32(v))))
		case 0x7e: // i64
			body = appendS64(append(body, 0x42), int64(v))
		case 0x7d: // f32
			b := uint32(v)
			body = append(body, 0x43, byte(b), byte(b>>8), byte(b>>16), byte(b>>24))
		case 0x7c: // f64
			body = append(body, 0x44)
			for k := 0; k < 8; k++ {
				body = append(body, byte(v>>(8*k)))
			}
		}
		body = append(body, 0x0b)
	}
	return body
}

// exportSection points `_initialize` at the function that returns.
func exportSection(old []byte, noop uint32) []byte {
	r := &reader{b: old}
	n := int(r.u32())
	body := appendU32(nil, uint32(n))
	for i := 0; i < n; i++ {
		name := r.name()
		kind := r.byte()
		idx := r.u32()
		if name == InitExport && kind == 0 {
			idx = noop
		}
		body = append(appendName(body, name), kind)
		body = appendU32(body, idx)
	}
	return body
}

// A segment of the baked memory.
type segment struct {
	at    int
	bytes []byte
}

// segments cuts memory into its non-zero runs (a fresh memory is zero):
// runs closer than mergeGap are one segment, as a segment's header costs
// about as much as that many zeros.
func segments(mem []byte) []segment {
	const mergeGap = 32
	var out []segment
	for i := 0; i < len(mem); {
		if mem[i] == 0 {
			i++
			continue
		}
		start, end := i, i+1
		for j := i + 1; j < len(mem) && j-end < mergeGap; j++ {
			if mem[j] != 0 {
				end = j + 1
			}
		}
		out = append(out, segment{at: start, bytes: mem[start:end]})
		i = end
	}
	return out
}
