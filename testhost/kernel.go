package testhost

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// KernelModule is the import module of the Extism kernel functions.
const KernelModule = "extism:host/env"

// maxKernelBytes bounds the kernel memory one call may allocate. go-pdk never
// frees its output or error block, so the kernel is reset at every call (as
// Extism's own kernel does); the bound turns a runaway guest into a trap
// instead of an exhausted test machine.
const maxKernelBytes = 64 << 20

// kernel is a minimal Extism kernel: the memory blocks ("host memory" in
// go-pdk's words) the guest moves its input and output through, plus the
// call's input, output and error. Extism's own kernel is a wasm module with a
// block allocator; here a block is a range of one growing byte slice, and
// offsets are indices into it (offset 0 is never a block: it is Extism's null).
//
// A kernel belongs to one instance, which is single-threaded, so nothing locks it.
type kernel struct {
	input  []byte
	mem    []byte  // the arena; mem[:kernelBase] is never handed out
	blocks []block // in allocation order, which is also offset order
	output []byte
	outSet bool
	errMsg []byte
	errSet bool
	logs   []string // log_* messages of the current call (bounded)
}

type block struct {
	start, length uint64
	freed         bool
}

const kernelBase = 8

func newKernel() *kernel { return &kernel{mem: make([]byte, kernelBase, 64<<10)} }

// reset starts a call: every block from the previous call is gone.
func (k *kernel) reset(input []byte) {
	k.input = input
	k.mem = k.mem[:kernelBase]
	k.blocks = k.blocks[:0]
	k.output, k.outSet = nil, false
	k.errMsg, k.errSet = nil, false
	k.logs = k.logs[:0]
}

// find returns the live block containing [p, p+n).
func (k *kernel) find(fn string, p, n uint64) *block {
	i := sort.Search(len(k.blocks), func(i int) bool { return k.blocks[i].start > p }) - 1
	if i >= 0 {
		b := &k.blocks[i]
		if !b.freed && p+n <= b.start+b.length && p+n >= p {
			return b
		}
	}
	panic(fmt.Errorf("%s: offset %d (+%d) is not inside a live kernel block", fn, p, n))
}

// startOf returns the live block starting at p, or nil.
func (k *kernel) startOf(p uint64) *block {
	i := sort.Search(len(k.blocks), func(i int) bool { return k.blocks[i].start >= p })
	if i < len(k.blocks) && k.blocks[i].start == p && !k.blocks[i].freed {
		return &k.blocks[i]
	}
	return nil
}

func (k *kernel) alloc(n uint64) uint64 {
	if n == 0 {
		return 0
	}
	start := (uint64(len(k.mem)) + 7) &^ 7 // 8-aligned, as go-pdk's u64 loads expect
	end := start + n
	if end > maxKernelBytes || end < start {
		panic(fmt.Errorf("alloc: %d bytes would exceed the kernel limit of %d", n, maxKernelBytes))
	}
	if uint64(cap(k.mem)) < end {
		grown := make([]byte, len(k.mem), max(end, 2*uint64(cap(k.mem))))
		copy(grown, k.mem)
		k.mem = grown
	}
	k.mem = k.mem[:end]
	clear(k.mem[start:end])
	k.blocks = append(k.blocks, block{start: start, length: n})
	return start
}

// bytesAt returns the whole block starting at p (nil for p == 0).
func (k *kernel) bytesAt(fn string, p uint64) []byte {
	if p == 0 {
		return nil
	}
	b := k.startOf(p)
	if b == nil {
		panic(fmt.Errorf("%s: offset %d is not the start of a live kernel block", fn, p))
	}
	return k.mem[b.start : b.start+b.length]
}

func (k *kernel) inputAt(fn string, off, n uint64) []byte {
	if off+n > uint64(len(k.input)) || off+n < off {
		panic(fmt.Errorf("%s: offset %d (+%d) is past the input (%d bytes)", fn, off, n, len(k.input)))
	}
	return k.input[off : off+n]
}

const maxLogs = 256

func (k *kernel) log(level string, msg []byte) {
	if len(k.logs) < maxLogs {
		k.logs = append(k.logs, level+": "+string(msg))
	}
}

type kernelKey struct{}

// kernelOf finds the calling instance's kernel: the Instance puts it in the
// context of every call, so one host module serves all instances of a Runtime.
func kernelOf(ctx context.Context) *kernel {
	k, _ := ctx.Value(kernelKey{}).(*kernel)
	if k == nil {
		panic(fmt.Errorf("%s called outside a testhost call", KernelModule))
	}
	return k
}

var (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

// kernelFunc is one implemented kernel import: its wasm signature and body.
type kernelFunc struct {
	params, results []api.ValueType
	fn              func(k *kernel, stack []uint64)
}

// kernelFuncs are the kernel functions the test host implements: everything
// go-pdk's input/output/error/memory path uses, plus the cheap no-op-able ones
// (config and vars are always empty, logs are kept per call). http_* and
// get_log_level are deliberately absent: a module importing them fails Load.
var kernelFuncs = map[string]kernelFunc{
	"input_length": {nil, []api.ValueType{i64}, func(k *kernel, s []uint64) {
		s[0] = uint64(len(k.input))
	}},
	"input_load_u8": {[]api.ValueType{i64}, []api.ValueType{i32}, func(k *kernel, s []uint64) {
		s[0] = uint64(k.inputAt("input_load_u8", s[0], 1)[0])
	}},
	"input_load_u64": {[]api.ValueType{i64}, []api.ValueType{i64}, func(k *kernel, s []uint64) {
		s[0] = binary.LittleEndian.Uint64(k.inputAt("input_load_u64", s[0], 8))
	}},
	"alloc": {[]api.ValueType{i64}, []api.ValueType{i64}, func(k *kernel, s []uint64) {
		s[0] = k.alloc(s[0])
	}},
	"free": {[]api.ValueType{i64}, nil, func(k *kernel, s []uint64) {
		// The arena is reclaimed wholesale at the next call; a freed block
		// only stops being addressable.
		if b := k.startOf(s[0]); b != nil {
			b.freed = true
		}
	}},
	"length": {[]api.ValueType{i64}, []api.ValueType{i64}, func(k *kernel, s []uint64) {
		if b := k.startOf(s[0]); b != nil {
			s[0] = b.length
		} else {
			s[0] = 0
		}
	}},
	"length_unsafe": {[]api.ValueType{i64}, []api.ValueType{i64}, func(k *kernel, s []uint64) {
		if b := k.startOf(s[0]); b != nil {
			s[0] = b.length
		} else {
			s[0] = 0
		}
	}},
	"load_u8": {[]api.ValueType{i64}, []api.ValueType{i32}, func(k *kernel, s []uint64) {
		k.find("load_u8", s[0], 1)
		s[0] = uint64(k.mem[s[0]])
	}},
	"load_u64": {[]api.ValueType{i64}, []api.ValueType{i64}, func(k *kernel, s []uint64) {
		k.find("load_u64", s[0], 8)
		s[0] = binary.LittleEndian.Uint64(k.mem[s[0]:])
	}},
	"store_u8": {[]api.ValueType{i64, i32}, nil, func(k *kernel, s []uint64) {
		k.find("store_u8", s[0], 1)
		k.mem[s[0]] = byte(s[1])
	}},
	"store_u64": {[]api.ValueType{i64, i64}, nil, func(k *kernel, s []uint64) {
		k.find("store_u64", s[0], 8)
		binary.LittleEndian.PutUint64(k.mem[s[0]:], s[1])
	}},
	"output_set": {[]api.ValueType{i64, i64}, nil, func(k *kernel, s []uint64) {
		p, n := s[0], s[1]
		if n == 0 {
			k.output, k.outSet = []byte{}, true
			return
		}
		k.find("output_set", p, n)
		k.output, k.outSet = append([]byte{}, k.mem[p:p+n]...), true
	}},
	"error_set": {[]api.ValueType{i64}, nil, func(k *kernel, s []uint64) {
		if s[0] == 0 { // Extism: a null error clears it
			k.errMsg, k.errSet = nil, false
			return
		}
		k.errMsg, k.errSet = append([]byte{}, k.bytesAt("error_set", s[0])...), true
	}},
	"config_get": {[]api.ValueType{i64}, []api.ValueType{i64}, func(k *kernel, s []uint64) {
		k.bytesAt("config_get", s[0])
		s[0] = 0 // no plugin config: the policy is configured through the configure export
	}},
	"var_get": {[]api.ValueType{i64}, []api.ValueType{i64}, func(k *kernel, s []uint64) {
		k.bytesAt("var_get", s[0])
		s[0] = 0
	}},
	"var_set": {[]api.ValueType{i64, i64}, nil, func(k *kernel, s []uint64) {
		k.bytesAt("var_set", s[0])
	}},
	"log_info":  {[]api.ValueType{i64}, nil, func(k *kernel, s []uint64) { k.log("info", k.bytesAt("log_info", s[0])) }},
	"log_debug": {[]api.ValueType{i64}, nil, func(k *kernel, s []uint64) { k.log("debug", k.bytesAt("log_debug", s[0])) }},
	"log_warn":  {[]api.ValueType{i64}, nil, func(k *kernel, s []uint64) { k.log("warn", k.bytesAt("log_warn", s[0])) }},
	"log_error": {[]api.ValueType{i64}, nil, func(k *kernel, s []uint64) { k.log("error", k.bytesAt("log_error", s[0])) }},
}

// instantiateKernel registers the kernel as the host module KernelModule.
func instantiateKernel(ctx context.Context, rt wazero.Runtime) error {
	b := rt.NewHostModuleBuilder(KernelModule)
	for name, f := range kernelFuncs {
		body := f.fn
		b.NewFunctionBuilder().
			WithGoFunction(api.GoFunc(func(ctx context.Context, stack []uint64) {
				body(kernelOf(ctx), stack)
			}), f.params, f.results).
			WithName(name).
			Export(name)
	}
	_, err := b.Instantiate(ctx)
	return err
}

func sameTypes(a, b []api.ValueType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func sig(params, results []api.ValueType) string {
	name := func(ts []api.ValueType) string {
		s := "("
		for i, t := range ts {
			if i > 0 {
				s += ", "
			}
			s += api.ValueTypeName(t)
		}
		return s + ")"
	}
	return name(params) + " -> " + name(results)
}
