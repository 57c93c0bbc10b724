package preinit

import (
	"bytes"
	"context"
	"testing"

	"github.com/tetratelabs/wazero"
)

// vec is a section body: a count and its entries.
func vec(entries ...[]byte) []byte {
	b := appendU32(nil, uint32(len(entries)))
	for _, e := range entries {
		b = append(b, e...)
	}
	return b
}

func body(code ...byte) []byte {
	return append(appendU32(nil, uint32(len(code)+1)), append([]byte{0}, code...)...)
}

func export(name string, kind byte, idx uint32) []byte {
	return appendU32(append(appendName(nil, name), kind), idx)
}

// reactor is a module whose start writes 42 at address 100 and adds 7 to a
// global; `get` answers their sum. Its imports, if any, are env.f: () -> (),
// called by the start when callHost.
func reactor(callHost bool) []byte {
	secs := []section{{secType, vec([]byte{0x60, 0, 0}, []byte{0x60, 0, 1, 0x7f})}}
	start := []byte{0x41, 0xe4, 0x00, 0x41, 42, 0x36, 2, 0, 0x23, 0, 0x41, 7, 0x6a, 0x24, 0} // mem[100]=42; g += 7
	base := uint32(0)
	if callHost {
		secs = append(secs, section{secImport, vec(append(append(appendName(nil, "env"), appendName(nil, "f")...), 0, 0))})
		start = append([]byte{0x10, 0}, start...) // call env.f first
		base = 1
	}
	secs = append(secs,
		section{secFunction, vec([]byte{0}, []byte{1})},
		section{secMemory, vec([]byte{0, 1})},
		section{secGlobal, vec([]byte{0x7f, 1, 0x41, 0, 0x0b})},
		section{secExport, vec(export(InitExport, 0, base), export("get", 0, base+1), export("memory", 2, 0))},
		section{secCode, vec(body(append(start, 0x0b)...), body(0x23, 0, 0x41, 0xe4, 0x00, 0x28, 2, 0, 0x6a, 0x0b))},
	)
	return encodeSections(secs)
}

// call instantiates module and calls its exports in order, answering the last result.
func call(t *testing.T, module []byte, exports ...string) uint64 {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	mod, err := rt.Instantiate(ctx, module)
	if err != nil {
		t.Fatal(err)
	}
	var last []uint64
	for _, name := range exports {
		if last, err = mod.ExportedFunction(name).Call(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return last[0]
}

func TestBakedStartIsTheStartsEnd(t *testing.T) {
	raw := reactor(false)
	if got := call(t, raw, InitExport, "get"); got != 49 {
		t.Fatalf("raw module after its start: %d, want 49", got)
	}
	baked, err := Module(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	// Memory and global begin where the start left them...
	if got := call(t, baked, "get"); got != 49 {
		t.Errorf("baked module before any call: %d, want 49", got)
	}
	// ... and _initialize, which the host still calls once, does nothing: run again, the start would add 7.
	if got := call(t, baked, InitExport, InitExport, "get"); got != 49 {
		t.Errorf("baked module after _initialize twice: %d, want 49", got)
	}
	again, err := Module(context.Background(), raw)
	if err != nil || !bytes.Equal(again, baked) {
		t.Errorf("baking twice gave different modules (err %v): a build must depend on its sources only", err)
	}
}

func TestAStartThatCallsTheHostIsRefused(t *testing.T) {
	_, err := Module(context.Background(), reactor(true))
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("env.f")) {
		t.Fatalf("err = %v, want one naming env.f", err)
	}
}

func TestAModuleWithoutAStartIsRefused(t *testing.T) {
	secs, _ := parseSections(reactor(false))
	for i := range secs {
		if secs[i].id == secExport {
			secs[i].body = vec(export("get", 0, 1))
		}
	}
	if _, err := Module(context.Background(), encodeSections(secs)); err == nil {
		t.Fatal("a module with no _initialize was baked")
	}
}

func TestSegments(t *testing.T) {
	mem := func(set map[int]byte) []byte {
		m := make([]byte, 256)
		for at, v := range set {
			m[at] = v
		}
		return m
	}
	for _, tc := range []struct {
		name string
		mem  []byte
		want []segment
	}{
		{"all zero: none", mem(nil), nil},
		{"one byte", mem(map[int]byte{5: 1}), []segment{{5, []byte{1}}}},
		{"a gap under 32 zeros is kept", mem(map[int]byte{0: 1, 31: 2}), []segment{{0, append(append([]byte{1}, make([]byte, 30)...), 2)}}},
		{"a gap of 32 zeros splits", mem(map[int]byte{0: 1, 33: 2}), []segment{{0, []byte{1}}, {33, []byte{2}}}},
		{"the last byte", mem(map[int]byte{255: 9}), []segment{{255, []byte{9}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := segments(tc.mem)
			if len(got) != len(tc.want) {
				t.Fatalf("segments: %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i].at != tc.want[i].at || !bytes.Equal(got[i].bytes, tc.want[i].bytes) {
					t.Errorf("segment %d: %v, want %v", i, got[i], tc.want[i])
				}
			}
		})
	}
}
