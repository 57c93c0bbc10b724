// Boots the real DSH host headless, with an isolated DSH_HOME and HOME, the
// plugin installed the way a user installs it (`dsh plugin add` of the packed
// tarball), and providers pointed at the project's fake provider.
//
// The primary is the stock DeepSeek adapter (it reports HTTP status and
// Retry-After, as real DeepSeek does); the secondary is a pi-ai
// openai-completions route named `mock`, so failover crosses providers the way
// users configure it.
import { execFile, spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const HOST_DIR = process.env.DSH_HOST_DIR;
if (!HOST_DIR) throw new Error('DSH_HOST_DIR is not set: run the e2e tests through `make test-e2e`');
export const DSH_BIN = join(HOST_DIR, 'host/node_modules/@deepseek-ai/dsh/lib/bin.js');

export const PRIMARY = { provider: 'deepseek-official', model: 'deepseek-v4-flash' };
export const PRIMARY_PRO = { provider: 'deepseek-official', model: 'deepseek-v4-pro' };
export const SECONDARY = { provider: 'mock', model: 'mock-b' };

/** The packed plugin tarball (`make pack` builds it before the tests run). */
async function tarball() {
  const files = (await readdir(join(ROOT, 'build'))).filter((f) => /^dsh-resilience-.*\.tgz$/.test(f));
  if (files.length !== 1) throw new Error(`expected one packed tarball in build/, found ${files.length}: run make pack`);
  return join(ROOT, 'build', files[0]);
}

export function baseEnv(home, extra = {}) {
  const env = {
    PATH: process.env.PATH,
    HOME: join(home, 'home'),
    DSH_HOME: join(home, 'dsh'),
    DSH_TELEMETRY_DISABLED: '1',
    DEEPSEEK_API_KEY: 'fake-key',
    MOCK_API_KEY: 'fake-key',
    ...extra,
  };
  return env;
}

/**
 * A new DSH_HOME (with a HOME beside it) whose `profile` has the packed plugin
 * installed the way a user installs it: `dsh plugin add file:<tarball>`.
 * @param {string} profile - `headless` or `web`.
 * @param {string[]} bundles - the profile's bundles before the plugin's own.
 */
async function homeWithPlugin(profile, bundles) {
  sweepTemplates();
  const dir = await mkdtemp(join(tmpdir(), `dshr-template-${process.pid}-${profile}-`));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const profileDir = join(dir, 'dsh/profiles', profile);
  await mkdir(profileDir, { recursive: true });
  await mkdir(join(dir, 'home'), { recursive: true });
  await writeFile(join(profileDir, 'package.json'), JSON.stringify({
    name: `dsh-profile-${profile}`, private: true, dependencies: {},
    dsh: { profile: { bundles } },
  }, null, 2));
  await writeFile(join(profileDir, 'pnpm-workspace.yaml'), 'nodeLinker: hoisted\n');
  const tgz = await tarball();
  await run(process.execPath, [DSH_BIN, 'plugin', '--profile', profile, 'add', `file:${tgz}`], {
    cwd: dir, env: baseEnv(dir), timeout: 180_000,
  });
  const manifest = JSON.parse(await readFile(join(profileDir, 'package.json'), 'utf8'));
  if (!manifest.dsh.profile.bundles.includes('dsh-resilience')) {
    throw new Error(`dsh plugin add did not add the bundle: ${JSON.stringify(manifest.dsh.profile)}`);
  }
  return dir;
}

/** The stock bundles of the two profiles the tests run. */
const PROFILE_BUNDLES = {
  headless: ['@deepseek-ai/dsh-base', '@deepseek-ai/dsh-headless'],
  web: ['@deepseek-ai/dsh-base', '@deepseek-ai/dsh-web-app'],
};
const templates = {};
/**
 * A DSH_HOME with the profile and the plugin installed, made once per
 * test process and copied for each test (pnpm's install is the slow part).
 * It is removed when the process exits (~6 MB each; they used to pile up),
 * and so are those of earlier test processes that died before they could.
 */
function templateHome(profile) {
  templates[profile] ??= homeWithPlugin(profile, PROFILE_BUNDLES[profile]);
  return templates[profile];
}

/** Removes the templates of test processes that are gone. */
function sweepTemplates() {
  for (const name of readdirSync(tmpdir())) {
    const pid = Number(/^dshr-template-(\d+)-/.exec(name)?.[1]);
    if (!pid) continue;
    try {
      process.kill(pid, 0);
    } catch (e) {
      if (e.code === 'ESRCH') rmSync(join(tmpdir(), name), { recursive: true, force: true });
    }
  }
}

const yamlList = (items) => items.map((s) => `  - ${s}`).join('\n');

/**
 * A fresh isolated home for one test.
 * @param {object} o
 * @param {string} o.baseURL - the fake provider's base URL.
 * @param {object} [o.plugin] - the plugin row's config.
 * @param {object|'stock'} [o.primaryRetry] - the DeepSeek route's retryPolicy; 'stock' sets
 *   none, so dsh-llm-retry runs as shipped (mode normal, 5 retries, 0.5 s doubling to 10 s).
 * @param {object|'stock'} [o.secondaryRetry] - the mock route's retryPolicy, or 'stock'.
 * @param {boolean} [o.noKeyRoute] - add a pi-ai route `nokey` (model mock-b) whose API key
 *   variable is never set: the host resolves its model, and fails its requests MISSING_CREDENTIAL.
 * @param {string} [o.defaultModel] - `provider/model` the agent starts on.
 * @param {string} [o.defaultEffort] - the reasoning effort it starts with.
 * @param {{dir: string, id: string, config?: object}[]} [o.extraPlugins] - test-only plugin
 *   packages (e2e/fixtures/) installed beside dsh-resilience, each row given this config.
 * @param {'headless'|'web'} [o.profile] - the profile the plugin is added to (default headless).
 * @param {string} [o.locale] - the host's UI locale preference (`zh`, `en`).
 */
export async function makeHome(o) {
  const profile = o.profile ?? 'headless';
  const dir = await mkdtemp(join(tmpdir(), 'dshr-e2e-'));
  await cp(await templateHome(profile), dir, { recursive: true, verbatimSymlinks: true });
  const dsh = join(dir, 'dsh');
  const [defProvider, defModel] = (o.defaultModel ?? `${PRIMARY.provider}/${PRIMARY.model}`).split('/');
  const secondaryRetry = o.secondaryRetry ?? { mode: 'normal', maxRetries: 0 };
  const retryLine = (policy, indent) => (policy === 'stock' ? [] : [`${indent}retryPolicy: ${JSON.stringify(policy)}`]);
  await writeFile(join(dsh, 'settings.yaml'), [
    'llm-pi-ai:',
    '  providers:',
    '    mock:',
    '      api: openai-completions',
    '      apiKeyEnv: MOCK_API_KEY',
    `      baseURL: ${o.baseURL}`,
    ...retryLine(secondaryRetry, '      '),
    '      models:',
    // Each mock model's declared window (`mockWindows`: {model: tokens}), 65536 unless a test says otherwise.
    ...['mock-a', 'mock-b', ...Object.keys(o.mockWindows ?? {}).filter((m) => m !== 'mock-a' && m !== 'mock-b')]
      .map((m) => `        - { id: ${m}, contextWindow: ${o.mockWindows?.[m] ?? 65536} }`),
    ...(o.noKeyRoute ? [
      '    nokey:',
      '      api: openai-completions',
      '      apiKeyEnv: NOKEY_API_KEY_NEVER_SET',
      `      baseURL: ${o.baseURL}`,
      '      models:',
      '        - { id: mock-b, contextWindow: 65536 }',
    ] : []),
    'agent-default-model:',
    `  provider: ${defProvider}`,
    `  model: ${defModel}`,
    ...(o.defaultEffort ? [`  reasoningEffort: ${o.defaultEffort}`] : []),
    ...(o.locale ? ['locale:', `  preference: ${o.locale}`] : []),
    '',
  ].join('\n'));
  const primaryRetry = o.primaryRetry ?? { mode: 'normal', maxRetries: 2, backoff: { initialDelayMs: 50, maxDelayMs: 200, jitterRatio: 0 } };
  await writeFile(join(dsh, 'profiles', profile, 'cordis.patch.yml'), [
    '# Deterministic test overlay: no title request eating scripted answers,',
    '# plaintext session logs, the DeepSeek route on the fake provider.',
    '- id: session-title-llm',
    '  disabled: true',
    '- id: session-persistence-jsonl',
    '  config:',
    "    root: !!js dshHomePath('sessions')",
    '    compression: none',
    '- id: llm-deepseek',
    '  config:',
    `    baseURL: ${o.baseURL}`,
    ...retryLine(primaryRetry, '    '),
    `    streamIdleTimeoutMs: ${o.streamIdleTimeoutMs ?? 30000}`,
    '- id: resilience',
    `  config: ${JSON.stringify(o.plugin ?? {})}`,
    ...(o.extraPlugins ?? []).flatMap((p) => [`- id: ${p.id}`, `  config: ${JSON.stringify(p.config ?? {})}`]),
    '',
  ].join('\n'));
  await installExtraPlugins(dsh, o.extraPlugins ?? [], profile);
  return {
    dir,
    dsh,
    env: (extra) => baseEnv(dir, extra),
    cleanup: () => rm(dir, { recursive: true, force: true }),
    /**
     * Copies this home's profile (plugin, overlay and all) under another name in the same
     * DSH_HOME, for hosts started at the same moment: give each its own (`runHeadless`'s
     * `profile`). Every `dsh --profile P` boot rewrites `profiles/P/cordis.yml` in place
     * (a truncating write of the same empty root list) just before its loader reads that file,
     * so a host reading while another rewrites can get an empty file and die at boot with
     * "config file must be a top-level array". Profiles are only the plugin tree: the hosts
     * still share everything the plugin keeps under DSH_HOME (health file, lock, audit log).
     * @param {string} name - the new profile's name.
     * @returns {Promise<string>} the name, for `runHeadless`.
     */
    copyProfile: async (name) => {
      await cp(join(dsh, 'profiles', profile), join(dsh, 'profiles', name), { recursive: true, verbatimSymlinks: true });
      return name;
    },
  };
}

/**
 * Installs test-only plugin packages into the home's headless profile as
 * `dsh plugin add file:` leaves one: copied into the profile's node_modules
 * and listed as a bundle (its `dsh.bundle.patch` inserts its row). pnpm is not
 * run again: the fixtures import nothing, so there is nothing to resolve.
 */
async function installExtraPlugins(dsh, plugins, profileName) {
  if (plugins.length === 0) return;
  const profile = join(dsh, 'profiles', profileName);
  const manifestPath = join(profile, 'package.json');
  const manifest = JSON.parse(await readFile(manifestPath, 'utf8'));
  for (const p of plugins) {
    const pkg = JSON.parse(await readFile(join(p.dir, 'package.json'), 'utf8'));
    await cp(p.dir, join(profile, 'node_modules', pkg.name), { recursive: true });
    manifest.dsh.profile.bundles.push(pkg.name);
  }
  await writeFile(manifestPath, JSON.stringify(manifest, null, 2));
}

/**
 * Runs one headless task to completion.
 * @param {object} [opts] - `profile` picks the profile to boot (default `headless`; see
 *   `copyProfile` for hosts started at once). `timeoutMs` only guards against a hung host:
 *   on the shared 2-core machine at load 20-40 a plain boot and two requests took over 60 s,
 *   so the default is generous and a test never relies on it to end a run.
 * @returns {Promise<{code: number|null, signal: string|null, stdout: string, stderr: string, ms: number, answerMs: number|undefined, timedOut: boolean}>}
 *   `answerMs`: when the answer's first byte reached stdout, from the spawn; `ms`: when the process ended;
 *   `timedOut`: the harness killed it at `timeoutMs` (stderr says so too, for the assertion messages).
 */
export function runHeadless(home, task, { timeoutMs = 240_000, signal, onStderr, profile = 'headless', env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, [DSH_BIN, '--profile', profile, task], {
      cwd: join(home.dir, 'home'), env: { ...home.env(), ...env }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let answerMs;
    child.stdout.on('data', (d) => { answerMs ??= Date.now() - started; stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; onStderr?.(String(d)); });
    let timedOut = false;
    const timer = setTimeout(() => { timedOut = true; child.kill('SIGKILL'); }, timeoutMs);
    signal?.addEventListener('abort', () => child.kill('SIGINT'), { once: true });
    let settled = false;
    const done = (code, sig) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(drain);
      if (timedOut) stderr += `\n[harness] dsh was still running after ${timeoutMs} ms and was killed\n`;
      resolve({ code, signal: sig, stdout, stderr, ms: Date.now() - started, answerMs, pid: child.pid, child, timedOut });
    };
    // 'close' waits for stdout and stderr to end as well; a process that inherited them
    // could hold them open after dsh is gone. Thirty seconds after the exit the run is over
    // whatever holds them, so a test can only wait as long as its timeout.
    let drain;
    child.on('exit', (code, sig) => {
      drain = setTimeout(() => { child.stdout.destroy(); child.stderr.destroy(); done(code, sig); }, 30_000);
    });
    child.on('error', reject);
    child.on('close', done);
  });
}

/** Every session event the run logged, in order (the overlay keeps them plaintext). */
export async function sessionEvents(home) {
  const root = join(home.dsh, 'sessions');
  const out = [];
  const walk = async (d) => {
    for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.name === 'session.jsonl') {
        for (const line of (await readFile(p, 'utf8')).split('\n').slice(1)) if (line.trim()) out.push(JSON.parse(line));
      }
    }
  };
  await walk(root);
  return out;
}

/**
 * The plugin's audit log records: its whole lines. A test that polls the log
 * reads it while the plugin appends, and a batch being written can be seen
 * half-way (one CI run failed on "Unterminated string in JSON at position 285"); the
 * line is whole, newline and all, at the next read.
 */
export async function auditRecords(home) {
  const p = join(home.dsh, 'dsh-resilience/audit.jsonl');
  if (!existsSync(p)) return [];
  const text = await readFile(p, 'utf8');
  return text.slice(0, text.lastIndexOf('\n') + 1).split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/** stderr without the lines Node prints about itself. */
export const cleanStderr = (s) => s.split('\n').filter((l) => l && !/ExperimentalWarning|--trace-warnings/.test(l)).join('\n');

export { dirname };
