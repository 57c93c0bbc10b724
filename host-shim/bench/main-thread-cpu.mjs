// Preloaded into each run of the start-up bench (`--import`): the CPU the
// process's main thread spent before its first outgoing HTTP request (the
// model request), written once to $DSHR_BENCH_CPU, and in all, at the
// process's exit, to $DSHR_BENCH_CPU.exit. On a shared machine the wall
// figures mostly measure the wait for a core; these do not.
// Linux reads the main thread's own run time (schedstat, ns); elsewhere
// it falls back to the whole process's CPU.
import { readFileSync, writeFileSync } from 'node:fs';
import dc from 'node:diagnostics_channel';

const out = process.env.DSHR_BENCH_CPU;
const mainThreadMs = () => {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  }
};
/** Writes once per file: a child process of the host (same environment) never overwrites it. */
const note = (file) => {
  try {
    writeFileSync(file, String(Math.round(mainThreadMs())), { flag: 'wx' });
  } catch { /* written already */ }
};
let done = !out;
function first() {
  if (done) return;
  done = true;
  note(out);
}
dc.subscribe('undici:request:create', first); // fetch
dc.subscribe('http.client.request.start', first); // node:http
if (out) process.on('exit', () => note(`${out}.exit`));
