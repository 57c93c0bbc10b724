// A fake provider call for the stream wrapper's tests (stall.test.mjs,
// hedge.test.mjs): chunks are pushed by the test, a `finish` chunk or end()
// ends it as an adapter would, and aborting its signal closes its
// connection (`closed`) and ends it with an aborted finish. `released`: its
// iterator was let go.
import { mock } from 'node:test';

/** Moves the mocked clock and lets the promise chains it released run. */
export async function advance(ms) {
  mock.timers.tick(ms);
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

export class FakeCall {
  constructor(options) {
    this.options = options;
    this.queue = [];
    this.closed = false;
    this.released = false;
    options.signal.addEventListener('abort', () => { this.closed = true; this.wake?.(); }, { once: true });
  }
  push(...chunks) { this.queue.push(...chunks); this.wake?.(); }
  end() { this.ended = true; this.wake?.(); }
  async *[Symbol.asyncIterator]() {
    try {
      while (true) {
        if (this.queue.length) {
          const chunk = this.queue.shift();
          yield chunk;
          if (chunk.type === 'finish') return;
          continue;
        }
        if (this.options.signal.aborted) {
          yield { type: 'finish', reason: { kind: 'aborted', failure: { code: 'ABORTED', message: 'aborted by caller' } } };
          return;
        }
        if (this.ended) return;
        await new Promise((r) => { this.wake = r; });
      }
    } finally {
      this.released = true;
    }
  }
}
