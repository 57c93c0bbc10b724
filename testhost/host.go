// Package testhost runs the dsh-resilience wasm module the way an Extism host
// does, on wazero, with a small Go implementation of the Extism kernel, so
// the module's contract (wit/policy.wit) can be tested without the real host.
//
// It also parses the subset of WIT the contract uses (wit.go) and validates
// JSON documents against its types (witjson.go).
package testhost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

// InitExport is the reactor initialiser of a wasip1 c-shared Go module: it runs
// the Go runtime's and the packages' initialisation and returns. It must run
// exactly once, before any other export: calling an export first finds no Go
// runtime; calling it twice re-initialises a live runtime.
const InitExport = "_initialize"

// memoryLimitPages caps guest memory at 256 MiB (wazero's default is 4 GiB),
// so a leaking guest traps in a test instead of swapping the machine.
const memoryLimitPages = 4096

// Runtime is a compiled module, ready to be instantiated any number of times.
// Its methods may be used from several goroutines; each Instance may not.
type Runtime struct {
	rt       wazero.Runtime
	cache    wazero.CompilationCache
	compiled wazero.CompiledModule
	imports  []string
}

// CacheDir is where compiled modules are cached between test runs:
// $DSH_RESILIENCE_WAZERO_CACHE, else <user cache dir>/dsh-resilience/wazero,
// else a directory under the system temp dir. Compiling the module costs
// about a second; loading it from the cache, about a tenth of that. wazero
// keys the cache by its own version and the module's bytes, so a stale entry
// is never used.
func CacheDir() string {
	if d := os.Getenv("DSH_RESILIENCE_WAZERO_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "dsh-resilience", "wazero")
	}
	return filepath.Join(os.TempDir(), "dsh-resilience-wazero")
}

// Load reads and compiles the module at wasmPath (see LoadBytes).
func Load(ctx context.Context, wasmPath string) (*Runtime, error) {
	wasm, err := os.ReadFile(wasmPath)
	if err != nil {
		return nil, err
	}
	return LoadBytes(ctx, wasm)
}

// LoadBytes compiles a module once, through the compilation cache in
// CacheDir, and checks its imports: every wasi_snapshot_preview1 import is
// served by wazero's WASI, every extism:host/env import must be one the mini
// kernel implements with the same signature, and any other import module is
// an error. A module that imports something the host does not provide fails
// here, naming it, rather than at some later call.
func LoadBytes(ctx context.Context, wasm []byte) (*Runtime, error) {
	cache, err := wazero.NewCompilationCacheWithDir(CacheDir())
	if err != nil {
		// An unwritable cache dir only costs time.
		cache = wazero.NewCompilationCache()
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().
		WithCompilationCache(cache).
		WithMemoryLimitPages(memoryLimitPages))
	r := &Runtime{rt: rt, cache: cache}
	fail := func(err error) (*Runtime, error) {
		_ = r.Close(ctx)
		return nil, err
	}
	if r.compiled, err = rt.CompileModule(ctx, wasm); err != nil {
		return fail(fmt.Errorf("testhost: compile: %w", err))
	}
	var problems []string
	for _, f := range r.compiled.ImportedFunctions() {
		mod, name, _ := f.Import()
		r.imports = append(r.imports, mod+"."+name)
		switch mod {
		case wasi_snapshot_preview1.ModuleName:
			// wazero implements all of preview1; instantiation would name a gap.
		case KernelModule:
			kf, ok := kernelFuncs[name]
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("%s.%s is not implemented by the test kernel", mod, name))
			case !sameTypes(kf.params, f.ParamTypes()) || !sameTypes(kf.results, f.ResultTypes()):
				problems = append(problems, fmt.Sprintf("%s.%s has signature %s, the test kernel implements %s",
					mod, name, sig(f.ParamTypes(), f.ResultTypes()), sig(kf.params, kf.results)))
			}
		default:
			problems = append(problems, fmt.Sprintf("%s.%s: unknown import module", mod, name))
		}
	}
	sort.Strings(r.imports)
	if len(problems) > 0 {
		return fail(fmt.Errorf("testhost: module imports what the host does not provide:\n  %s", strings.Join(problems, "\n  ")))
	}
	if _, ok := r.compiled.ExportedFunctions()[InitExport]; !ok {
		return fail(fmt.Errorf("testhost: module has no %s export: not a wasip1 reactor (build with -buildmode=c-shared)", InitExport))
	}
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		return fail(err)
	}
	if err := instantiateKernel(ctx, rt); err != nil {
		return fail(err)
	}
	return r, nil
}

// Imports lists the module's function imports as "module.name", sorted.
func (r *Runtime) Imports() []string { return append([]string(nil), r.imports...) }

// Exports returns the module's exported functions by name (including _initialize).
func (r *Runtime) Exports() map[string]api.FunctionDefinition {
	return r.compiled.ExportedFunctions()
}

// Close releases the runtime, its instances and the compilation cache handle.
func (r *Runtime) Close(ctx context.Context) error {
	err := r.rt.Close(ctx)
	if r.cache != nil {
		err = errors.Join(err, r.cache.Close(ctx))
	}
	return err
}

// Instance is one instantiation of the module, with its own guest memory and
// policy state. It is single-threaded: calls must not overlap. After a trap it
// refuses further calls (a Go guest's runtime state is undefined after a trap,
// and the real host recreates the instance too).
type Instance struct {
	mod    api.Module
	ctx    context.Context
	k      *kernel
	stack  []uint64
	fns    map[string]api.Function
	stderr *limitedBuffer
	broken *TrapError
	// The module's direct path (plugin/direct.go), nil when it has none or
	// Kernel asked for the Extism kernel's alone.
	dIn, dOut api.Function
	// Kernel: every call goes through the Extism kernel, as a host that does
	// not know the direct path calls the module.
	Kernel bool
}

// The direct path's exports (plugin/direct.go): transport, not policy, so
// they are not in the WIT world, as _initialize is not.
const (
	DirectInputExport  = "dsh_direct_input"
	DirectOutputExport = "dsh_direct_output"
)

// Instantiate creates an instance and runs _initialize once.
//
// The module config matters:
//   - WithSysNanotime/WithSysWalltime: wazero's default clocks are
//     deterministic fakes that advance 1 ms on every read, so the Go runtime
//     (which reads the clock constantly: scheduler, GC pacing) sees time race
//     ahead; measured, the guest's memory then grows without bound. With the
//     real clocks it stays flat (TestMemoryFlatMillionCalls). The policy
//     itself never reads a clock: time comes in the events, so outputs stay
//     deterministic either way.
//   - WithStartFunctions(_initialize): a c-shared wasip1 module is a reactor,
//     not a command; the default start function _start does not exist in it.
//   - the random source stays wazero's deterministic default, so map seeds and
//     the like are the same on every run.
//   - the guest's stderr (Go panics, fatal errors) is kept and attached to a
//     TrapError.
func (r *Runtime) Instantiate(ctx context.Context) (*Instance, error) {
	return r.instantiate(ctx, InitExport)
}

// instantiate instantiates the module, calling start (if any) first.
func (r *Runtime) instantiate(ctx context.Context, start ...string) (*Instance, error) {
	in := &Instance{k: newKernel(), stack: make([]uint64, 1), fns: map[string]api.Function{}, stderr: &limitedBuffer{max: 64 << 10}}
	in.ctx = context.WithValue(ctx, kernelKey{}, in.k)
	mctx := experimental.WithMemoryAllocator(in.ctx, guestAllocator) // memalloc.go
	cfg := wazero.NewModuleConfig().
		WithName(""). // anonymous: any number of instances per runtime
		WithStartFunctions(start...).
		WithSysNanotime().
		WithSysWalltime().
		WithStderr(in.stderr).
		WithStdout(in.stderr)
	mod, err := r.rt.InstantiateModule(mctx, r.compiled, cfg)
	if err != nil {
		return nil, fmt.Errorf("testhost: instantiate: %w%s", err, in.stderr.suffix())
	}
	in.mod = mod
	in.dIn, in.dOut = mod.ExportedFunction(DirectInputExport), mod.ExportedFunction(DirectOutputExport)
	return in, nil
}

// PluginError is an export's non-zero return: Message is the Extism error the
// guest set (empty if it set none).
type PluginError struct {
	Export  string
	Code    int32
	Message string
}

func (e *PluginError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("%s returned %d without setting an error", e.Export, e.Code)
	}
	return e.Message
}

// TrapError is a call that did not return: a wasm trap (unreachable, out of
// bounds, a kernel function rejecting its arguments), or the guest exiting
// (a Go fatal error calls proc_exit). The instance is unusable afterwards.
type TrapError struct {
	Export string
	Err    error
	// ExitCode is set when the guest exited rather than trapped.
	ExitCode *uint32
	// Stderr is what the guest wrote to stderr/stdout before the trap.
	Stderr string
}

func (e *TrapError) Error() string {
	s := fmt.Sprintf("testhost: %s trapped: %v", e.Export, e.Err)
	if e.Stderr != "" {
		s += "\nguest output:\n" + e.Stderr
	}
	return s
}

func (e *TrapError) Unwrap() error { return e.Err }

// ErrNoExport is returned (wrapped) for an export the module does not have.
var ErrNoExport = errors.New("no such export")

// Call runs an export: the input is the Extism input, the result is the
// Extism output. A non-zero return is a *PluginError carrying the guest's
// error string; a trap is a *TrapError.
func (in *Instance) Call(export string, input []byte) ([]byte, error) {
	if in.broken != nil {
		return nil, fmt.Errorf("testhost: instance unusable after an earlier trap: %w", in.broken)
	}
	fn := in.fns[export]
	if fn == nil {
		// wazero builds a call engine (with its own stack) per api.Function:
		// keep one per export rather than paying for it on every call.
		if fn = in.mod.ExportedFunction(export); fn == nil {
			return nil, fmt.Errorf("testhost: %q: %w", export, ErrNoExport)
		}
		def := fn.Definition()
		if len(def.ParamTypes()) != 0 || !sameTypes(def.ResultTypes(), []api.ValueType{api.ValueTypeI32}) {
			return nil, fmt.Errorf("testhost: %q has signature %s, not an Extism export () -> (i32)",
				export, sig(def.ParamTypes(), def.ResultTypes()))
		}
		in.fns[export] = fn
	}
	in.k.reset(input)
	defer func() { in.k.input = nil }() // do not keep the caller's buffer
	in.stderr.Reset()
	onDirect := in.dIn != nil && in.dOut != nil && !in.Kernel
	if onDirect {
		if err := in.directIn(export, input); err != nil {
			return nil, err
		}
	}
	in.stack[0] = 0
	if err := fn.CallWithStack(in.ctx, in.stack); err != nil {
		return nil, in.trapped(export, err)
	}
	if rc := int32(uint32(in.stack[0])); rc != 0 {
		return nil, &PluginError{Export: export, Code: rc, Message: string(in.k.errMsg)}
	}
	if onDirect {
		return in.directOut(export)
	}
	if !in.k.outSet {
		return []byte{}, nil
	}
	return in.k.output, nil
}

// Logs returns what the guest logged through the Extism log functions during
// the last call.
func (in *Instance) Logs() []string { return append([]string(nil), in.k.logs...) }

// MemorySize is the guest's linear memory size in bytes (0 if it has none).
// Wasm memory only grows, so its growth over many calls is the guest's high
// water mark: a flat size means the guest does not leak.
func (in *Instance) MemorySize() uint64 {
	if m := in.mod.Memory(); m != nil {
		return uint64(m.Size())
	}
	return 0
}

// KernelBytes is the kernel memory the last call used (input is separate).
func (in *Instance) KernelBytes() int { return len(in.k.mem) }

// Close releases the instance.
func (in *Instance) Close(ctx context.Context) error { return in.mod.Close(ctx) }

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	mu  sync.Mutex
	b   []byte
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := l.max - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}

func (l *limitedBuffer) Reset() {
	l.mu.Lock()
	l.b = l.b[:0]
	l.mu.Unlock()
}

func (l *limitedBuffer) suffix() string {
	if s := l.String(); s != "" {
		return "\nguest output:\n" + s
	}
	return ""
}

// directIn hands the input over on the direct path: the module answers where
// to write it (plugin/direct.go).
func (in *Instance) directIn(export string, input []byte) error {
	in.stack[0] = uint64(len(input))
	if err := in.dIn.CallWithStack(in.ctx, in.stack); err != nil {
		return in.trapped(export, err)
	}
	if len(input) > 0 && !in.mod.Memory().Write(uint32(in.stack[0]), input) {
		return in.trapped(export, fmt.Errorf("%s answered %d, out of memory bounds for %d bytes", DirectInputExport, in.stack[0], len(input)))
	}
	return nil
}

// directOut copies the answer out of the module's memory: it is valid there
// only until the next call.
func (in *Instance) directOut(export string) ([]byte, error) {
	in.stack[0] = 0
	if err := in.dOut.CallWithStack(in.ctx, in.stack); err != nil {
		return nil, in.trapped(export, err)
	}
	at, n := uint32(in.stack[0]>>32), uint32(in.stack[0])
	if n == 0 {
		return []byte{}, nil
	}
	b, ok := in.mod.Memory().Read(at, n)
	if !ok {
		return nil, in.trapped(export, fmt.Errorf("%s answered %d bytes at %d, out of memory bounds", DirectOutputExport, n, at))
	}
	return append([]byte{}, b...), nil // the caller may keep it, as the kernel path's
}

// trapped marks the instance unusable after a trap in export's call.
func (in *Instance) trapped(export string, err error) error {
	te := &TrapError{Export: export, Err: err, Stderr: in.stderr.String()}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		code := exit.ExitCode()
		te.ExitCode = &code
	}
	in.broken = te
	return te
}
