// Preloaded into each run of the start-up bench (`--import`): the CPU the
// process's main thread spent before its first outgoing HTTP request (the
// model request), written once to $DSHR_BENCH_CPU. On a shared machine the
// wall figure mostly measures the wait for a core; this one does not.
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
let done = !out;
function first() {
  if (done) return;
  done = true;
  try {
    writeFileSync(out, String(Math.round(mainThreadMs())), { flag: 'wx' }); // a child process of the host never overwrites it
  } catch { /* written already */ }
}
dc.subscribe('undici:request:create', first); // fetch
dc.subscribe('http.client.request.start', first); // node:http
