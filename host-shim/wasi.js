// @ts-check
// The WASI preview1 functions a standard-Go reactor module imports, and no more.
//
// Why not node:wasi: it prints an ExperimentalWarning to stderr when imported
// (headless DSH otherwise keeps stderr empty), and it offers no clean way to
// hand the guest its clock. The Go guest only needs a clock, random bytes,
// stdio writes (where a panic would print) and empty args/env; anything that
// would reach the filesystem answers EBADF, so the module has no I/O at all.
// randomFillSync, not webcrypto.getRandomValues: the latter loads Node's whole
// Web Crypto layer on first use, on the first instance's way up (the Go runtime's
// start asks for random bytes): measured ~4 ms of the main thread less, median of 12.
import { randomFillSync } from 'node:crypto';

const ESUCCESS = 0;
const EBADF = 8;
const EINVAL = 28;
const ENOSYS = 52;

/** Raised by proc_exit: the guest asked to stop, so the instance is finished. */
export class WasiExit extends Error {
  /** @param {number} code - the guest's exit code. */
  constructor(code) {
    super(`wasm module exited with code ${code}`);
    this.code = code;
  }
}

/**
 * @param {() => WebAssembly.Memory} memory - the instance's memory, read late
 *   because imports are built before the instance exists.
 * @param {(text: string) => void} onOutput - receives what the guest writes to fd 1 and 2.
 */
export function wasiImports(memory, onOutput) {
  const view = () => new DataView(memory().buffer);
  const bytes = () => new Uint8Array(memory().buffer);
  const decoder = new TextDecoder();
  /** @param {number} countPtr @param {number} sizePtr */
  const zeroCounts = (countPtr, sizePtr) => {
    view().setUint32(countPtr, 0, true);
    view().setUint32(sizePtr, 0, true);
    return ESUCCESS;
  };
  return {
    args_sizes_get: zeroCounts,
    args_get: () => ESUCCESS,
    environ_sizes_get: zeroCounts,
    environ_get: () => ESUCCESS,
    /** @param {number} id @param {bigint} _precision @param {number} resultPtr */
    clock_time_get(id, _precision, resultPtr) {
      let ns;
      if (id === 0) ns = BigInt(Date.now()) * 1_000_000n; // realtime
      else if (id === 1) ns = process.hrtime.bigint(); // monotonic: Go's GC paces on it
      else return EINVAL;
      view().setBigUint64(resultPtr, ns, true);
      return ESUCCESS;
    },
    /** @param {number} ptr @param {number} len */
    random_get(ptr, len) {
      randomFillSync(bytes(), ptr, len);
      return ESUCCESS;
    },
    /** @param {number} fd @param {number} iovs @param {number} iovsLen @param {number} nwrittenPtr */
    fd_write(fd, iovs, iovsLen, nwrittenPtr) {
      if (fd !== 1 && fd !== 2) return EBADF;
      const v = view();
      let total = 0;
      let text = '';
      for (let i = 0; i < iovsLen; i++) {
        const ptr = v.getUint32(iovs + i * 8, true);
        const len = v.getUint32(iovs + i * 8 + 4, true);
        text += decoder.decode(bytes().subarray(ptr, ptr + len));
        total += len;
      }
      onOutput(text);
      view().setUint32(nwrittenPtr, total, true);
      return ESUCCESS;
    },
    /** @param {number} fd @param {number} statPtr */
    fd_fdstat_get(fd, statPtr) {
      if (fd > 2) return EBADF;
      const v = view();
      v.setUint8(statPtr, 2); // character device
      v.setUint16(statPtr + 2, 0, true);
      v.setBigUint64(statPtr + 8, 0n, true);
      v.setBigUint64(statPtr + 16, 0n, true);
      return ESUCCESS;
    },
    /** @param {number} fd */
    fd_fdstat_set_flags: (fd) => (fd > 2 ? EBADF : ESUCCESS),
    fd_prestat_get: () => EBADF, // no preopened directories
    fd_prestat_dir_name: () => EBADF,
    fd_close: () => EBADF,
    sched_yield: () => ESUCCESS,
    // Go calls this only to sleep, which a reactor answering one call at a time
    // has no reason to do: report every clock subscription as already due.
    /** @param {number} inPtr @param {number} outPtr @param {number} nsubs @param {number} neventsPtr */
    poll_oneoff(inPtr, outPtr, nsubs, neventsPtr) {
      const v = view();
      for (let i = 0; i < nsubs; i++) {
        const sub = inPtr + i * 48;
        const ev = outPtr + i * 32;
        v.setBigUint64(ev, v.getBigUint64(sub, true), true); // userdata
        const tag = v.getUint8(sub + 8);
        v.setUint16(ev + 8, tag === 0 ? ESUCCESS : ENOSYS, true);
        v.setUint8(ev + 10, tag);
      }
      v.setUint32(neventsPtr, nsubs, true);
      return ESUCCESS;
    },
    /** @param {number} code */
    proc_exit(code) {
      throw new WasiExit(code);
    },
  };
}
