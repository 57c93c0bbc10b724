// @ts-check
// A small Extism kernel for one go-pdk module, in plain JS.
//
// Why not @extism/extism: 1.0.3 leaks a block per call and fails after ~16k
// calls, and lacks go-pdk's get_log_level; 2.0.0 is still a release candidate.
// The module needs eight kernel functions (and moves its input and output
// through its own memory when it exports the direct path, plugin/direct.go);
// serving them here over
// WebAssembly.instantiate is measured faster than either SDK (see RATIONALE.md and `make bench`
// for the numbers) and leaves nothing to leak: the kernel's heap is reset per call.
// testhost/ still loads the same .wasm with the official Extism Go SDK, so the
// module stays a genuine Extism plugin.
import { wasiImports, WasiExit } from './wasi.js';

/** A call that trapped: the instance is dead and must be replaced. */
export class TrapError extends Error {
  /**
   * @param {unknown} cause - what the call threw.
   * @param {string} [output] - what the guest wrote to stdout and stderr.
   */
  constructor(cause, output) {
    super(`wasm trap: ${/** @type {{message?: string} | undefined} */ (cause)?.message ?? cause}${output ? ` (guest said: ${output.slice(0, 500)})` : ''}`, { cause });
    this.name = 'TrapError';
  }
}

/** An export answered with an Extism error: the instance is fine. */
export class ModuleError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'ModuleError';
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The kernel's address space: blocks bump-allocated, all freed at the next call. */
class KernelHeap {
  constructor() {
    this.mem = new Uint8Array(64 * 1024);
    this.view = new DataView(this.mem.buffer);
    this.top = 8; // offset 0 means "no block"
    /** @type {Map<number, number>} offset -> length of each block */
    this.lengths = new Map();
  }
  reset() {
    this.top = 8;
    this.lengths.clear();
  }
  /** @param {number} n */
  alloc(n) {
    const off = this.top;
    const end = off + n;
    if (end > this.mem.length) {
      let size = this.mem.length * 2;
      while (size < end) size *= 2;
      const grown = new Uint8Array(size);
      grown.set(this.mem);
      this.mem = grown;
      this.view = new DataView(grown.buffer);
    }
    this.top = (end + 7) & ~7;
    this.lengths.set(off, n);
    return off;
  }
  /** @param {number} off */
  block(off) {
    const n = this.lengths.get(off);
    if (n === undefined) throw new Error(`extism kernel: no block at ${off}`);
    return this.mem.subarray(off, off + n);
  }
}

/**
 * One instance of the policy module. Single-threaded: one call at a time,
 * which JS's event loop guarantees since calls are synchronous.
 */
export class ModuleInstance {
  /**
   * @param {WebAssembly.Module} compiled - compiled once per process, shared.
   * @param {{ kernel?: boolean }} [opts] - kernel: move input and output
   *   through the Extism kernel even when the module has the direct path.
   */
  constructor(compiled, opts = {}) {
    this.heap = new KernelHeap();
    // Input is encoded into one reused buffer and output decoded in place, so
    // a call allocates no ArrayBuffers: their backing stores live outside
    // V8's heap, and churning them made the process's RSS step up by ~15 MB.
    this.inputBuf = new Uint8Array(4096);
    this.inputView = new DataView(this.inputBuf.buffer);
    this.inputLen = 0;
    /** @type {[number, number] | undefined} */
    this.output = undefined; // [offset, length] in the kernel heap
    /** @type {string | undefined} */
    this.error = undefined;
    this.guestOutput = '';
    /** @type {WebAssembly.Memory | undefined} */
    let memory;
    const heap = this.heap;
    // Extism's kernel ABI passes offsets and lengths as i64 (a BigInt in JS).
    /** @param {bigint} x */
    const num = (x) => Number(x);
    const env = {
      /** @param {bigint} n */
      alloc: (n) => BigInt(heap.alloc(num(n))),
      free: () => {},
      /** @param {bigint} off */
      length: (off) => BigInt(heap.lengths.get(num(off)) ?? 0),
      /** @param {bigint} off */
      length_unsafe: (off) => BigInt(heap.lengths.get(num(off)) ?? 0),
      /** @param {bigint} off */
      load_u8: (off) => heap.mem[num(off)],
      /** @param {bigint} off */
      load_u64: (off) => heap.view.getBigUint64(num(off), true),
      /** @param {bigint} off @param {number} v */
      store_u8: (off, v) => { heap.mem[num(off)] = v; },
      /** @param {bigint} off @param {bigint} v */
      store_u64: (off, v) => { heap.view.setBigUint64(num(off), v, true); },
      input_length: () => BigInt(this.inputLen),
      /** @param {bigint} off */
      input_load_u8: (off) => this.inputBuf[num(off)],
      /** @param {bigint} off */
      input_load_u64: (off) => {
        const o = num(off);
        if (o + 8 <= this.inputLen) return this.inputView.getBigUint64(o, true);
        let v = 0n; // a short tail: go-pdk reads 8 at a time only while 8 remain, but be safe
        for (let i = Math.min(7, this.inputLen - o - 1); i >= 0; i--) v = (v << 8n) | BigInt(this.inputBuf[o + i]);
        return v;
      },
      /** @param {bigint} off @param {bigint} n */
      output_set: (off, n) => { this.output = [num(off), num(n)]; },
      /** @param {bigint} off */
      error_set: (off) => { this.error = off === 0n ? undefined : decoder.decode(heap.block(num(off))); },
      get_log_level: () => 4, // above every level: the module logs nothing through the kernel
      log_debug: () => {}, log_info: () => {}, log_warn: () => {}, log_error: () => {}, log_trace: () => {},
    };
    const imports = {
      'extism:host/env': env,
      wasi_snapshot_preview1: wasiImports(() => /** @type {WebAssembly.Memory} */ (memory), (text) => { this.guestOutput = (this.guestOutput + text).slice(-4096); }),
    };
    this.instance = new WebAssembly.Instance(compiled, imports);
    memory = /** @type {WebAssembly.Memory} */ (this.instance.exports.memory);
    /** @type {any} the module's exports: its functions, `memory` and `_initialize` */
    this.exports = this.instance.exports;
    // The direct path (plugin/direct.go): the input written into the
    // module's memory and the output read from it, one copy each, instead
    // of eight bytes per kernel call. A module without it is called as any
    // Extism plugin.
    this.direct = !opts.kernel && typeof this.exports.dsh_direct_input === 'function' &&
      typeof this.exports.dsh_direct_output === 'function';
    try {
      this.exports._initialize(); // once; the shipped module's start is baked in and this returns at once (testhost/preinit)
    } catch (e) {
      throw new TrapError(e, this.guestOutput);
    }
  }

  /** Guest memory in bytes (it never shrinks; the benchmark watches it). */
  get memoryBytes() {
    return this.exports.memory.buffer.byteLength;
  }

  /**
   * Calls an export with a JSON string and returns the JSON string it answered.
   * @throws {ModuleError} when the export answered an error.
   * @throws {TrapError} when the instance trapped; it must not be used again.
   * @param {string} name
   * @param {string} json
   * @returns {string}
   */
  call(name, json) {
    const fn = this.exports[name];
    if (typeof fn !== 'function') throw new ModuleError(`the module has no export "${name}"`);
    this.heap.reset();
    if (this.inputBuf.length < json.length * 3) { // UTF-8 needs at most 3 bytes per UTF-16 unit
      this.inputBuf = new Uint8Array(json.length * 3);
      this.inputView = new DataView(this.inputBuf.buffer);
    }
    this.inputLen = encoder.encodeInto(json, this.inputBuf).written;
    this.output = undefined;
    this.error = undefined;
    let rc;
    let answer;
    try {
      if (this.direct) {
        const at = this.exports.dsh_direct_input(this.inputLen) >>> 0;
        // After the call: it may have grown the memory, which replaces its buffer.
        new Uint8Array(this.exports.memory.buffer, at, this.inputLen).set(this.inputBuf.subarray(0, this.inputLen));
      }
      rc = fn();
      if (rc === 0 && this.direct) answer = BigInt.asUintN(64, this.exports.dsh_direct_output());
    } catch (e) {
      if (e instanceof WasiExit || e instanceof WebAssembly.RuntimeError || e instanceof Error) {
        throw new TrapError(e, this.guestOutput);
      }
      throw e;
    }
    if (rc !== 0) throw new ModuleError(this.error ?? `${name} returned ${rc} with no error message`);
    if (answer !== undefined) {
      const n = Number(answer & 0xffffffffn);
      return n === 0 ? '' : decoder.decode(new Uint8Array(this.exports.memory.buffer, Number(answer >> 32n), n));
    }
    if (this.output === undefined) return '';
    const [off, n] = /** @type {[number, number]} */ (this.output); // set by output_set during fn()
    return decoder.decode(this.heap.mem.subarray(off, off + n));
  }
}
