// A real redis-server for the shared-state tests: started on 127.0.0.1 with
// an OS-picked port, no persistence (a restart comes back empty, as a lost
// Redis would), stopped with the test. scripts/ensure-redis.sh installs the
// Debian package and the client; this file finds both.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync } from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The directory holding node_modules/@redis/client (installed once). */
export function redisClientDir() {
  return process.env.DSH_REDIS_CLIENT_DIR
    || execFileSync(join(ROOT, 'scripts/ensure-redis.sh'), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

/**
 * Installs the pinned Redis client into a home's profile, as `dsh plugin add
 * @redis/client` leaves it. Copied synchronously: the promise form of the
 * recursive copy once stopped for good a third of the way through its ~2000
 * entries, in a test process whose fake providers and hosts kept libuv's
 * threads busy, and the test waited on it until its file was killed.
 * @param {string} profileDir - the home's profile (`<DSH_HOME>/profiles/headless`).
 */
export function addRedisClient(profileDir) {
  cpSync(join(redisClientDir(), 'node_modules/@redis'), join(profileDir, 'node_modules/@redis'), { recursive: true });
}

/** `() => import('@redis/client')` as the plugin would load it from a profile. */
export function clientLoader() {
  const dir = redisClientDir();
  const entry = createRequire(join(dir, 'package.json')).resolve('@redis/client');
  return () => import(pathToFileURL(entry).href);
}

async function freePort() {
  const srv = createServer();
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address();
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/** Starts redis-server; `kill()` ends it at once (SIGKILL), `start()` brings it back on the same port. */
export async function startRedis() {
  redisClientDir(); // installs redis-server too, when absent
  const port = await freePort();
  const r = { port, url: `redis://127.0.0.1:${port}`, proc: undefined };
  r.start = async () => {
    const proc = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no', '--enable-debug-command', 'local'], { stdio: ['ignore', 'pipe', 'inherit'] });
    r.proc = proc;
    await new Promise((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 10_000);
      proc.stdout.on('data', (d) => {
        out += d;
        if (/Ready to accept connections/.test(out)) { clearTimeout(timer); resolve(); }
      });
      proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`redis-server exited ${code}: ${out}`)); });
    });
    proc.stdout.resume();
    return r;
  };
  r.kill = async () => {
    const proc = r.proc;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((resolve) => proc.on('exit', resolve));
    proc.kill('SIGKILL');
    await exited;
  };
  return r.start();
}
