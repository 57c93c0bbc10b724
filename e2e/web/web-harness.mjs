// The real web profile (`dsh --profile web`) for the browser tests: an
// isolated DSH_HOME with the plugin installed by `dsh plugin add` of the
// packed tarball, providers pointed at the project's fake provider, the
// server started and stopped like a user's, and headless Chromium (Debian's,
// driven by playwright-core) with its console watched.
import { execFile, spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { HOST_DIR, PRIMARY, ROOT, SECONDARY } from '../harness.mjs';

const run = promisify(execFile);
const DSH_BIN = join(HOST_DIR, 'host/node_modules/@deepseek-ai/dsh/lib/bin.js');
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const ARTIFACTS = join(ROOT, 'artifacts', 'web');
export { PRIMARY, SECONDARY };

const env = (dir) => ({
  PATH: process.env.PATH,
  HOME: join(dir, 'home'),
  DSH_HOME: join(dir, 'dsh'),
  DSH_TELEMETRY_DISABLED: '1',
  DEEPSEEK_API_KEY: 'fake-key',
  MOCK_API_KEY: 'fake-key',
});

let template;
/** A home with the web profile and the plugin added by `dsh plugin add`, made once per process. */
function templateHome() {
  template ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dshr-web-template-'));
    const profile = join(dir, 'dsh/profiles/web');
    await mkdir(profile, { recursive: true });
    await mkdir(join(dir, 'home'), { recursive: true });
    await writeFile(join(profile, 'package.json'), JSON.stringify({
      name: 'dsh-profile-web', private: true, dependencies: {},
      dsh: { profile: { bundles: ['@deepseek-ai/dsh-base', '@deepseek-ai/dsh-web-app'] } },
    }, null, 2));
    await writeFile(join(profile, 'pnpm-workspace.yaml'), 'nodeLinker: hoisted\n');
    const tgz = (await readdir(join(ROOT, 'build'))).find((f) => /^dsh-resilience-.*\.tgz$/.test(f));
    await run(process.execPath, [DSH_BIN, 'plugin', '--profile', 'web', 'add', `file:${join(ROOT, 'build', tgz)}`], { cwd: dir, env: env(dir), timeout: 180_000 });
    const manifest = JSON.parse(await readFile(join(profile, 'package.json'), 'utf8'));
    if (!manifest.dsh.profile.bundles.includes('dsh-resilience')) throw new Error(`dsh plugin add did not add the bundle: ${JSON.stringify(manifest.dsh.profile)}`);
    return dir;
  })();
  return template;
}

/**
 * A fresh isolated home for one test.
 * @param {{baseURL: string, plugin?: object, primaryRetry?: object, locale?: string}} o - the routes run the
 *   host's stock retry settings unless `primaryRetry` sets the DeepSeek route's.
 */
export async function makeWebHome(o) {
  const dir = await mkdtemp(join(tmpdir(), 'dshr-web-'));
  await cp(await templateHome(), dir, { recursive: true, verbatimSymlinks: true });
  const dsh = join(dir, 'dsh');
  await writeFile(join(dsh, 'settings.yaml'), [
    'llm-pi-ai:',
    '  providers:',
    '    mock:',
    '      api: openai-completions',
    '      apiKeyEnv: MOCK_API_KEY',
    `      baseURL: ${o.baseURL}`,
    '      models:',
    '        - { id: mock-a, contextWindow: 65536 }',
    '        - { id: mock-b, contextWindow: 65536 }',
    'agent-default-model:',
    `  provider: ${PRIMARY.provider}`,
    `  model: ${PRIMARY.model}`,
    ...(o.locale ? ['locale:', `  preference: ${o.locale}`] : []),
    '',
  ].join('\n'));
  await writeFile(join(dsh, 'profiles/web/cordis.patch.yml'), [
    '- id: session-title-llm',
    '  disabled: true',
    '- id: session-persistence-jsonl',
    '  config:',
    "    root: !!js dshHomePath('sessions')",
    '    compression: none',
    '- id: llm-deepseek',
    '  config:',
    `    baseURL: ${o.baseURL}`,
    ...(o.primaryRetry ? [`    retryPolicy: ${JSON.stringify(o.primaryRetry)}`] : []),
    '- id: resilience',
    `  config: ${JSON.stringify(o.plugin ?? {})}`,
    '',
  ].join('\n'));
  return { dir, dsh, env: () => env(dir), cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Takes the plugin out of the home's web profile, as `dsh plugin remove` leaves it. */
export async function withoutPlugin(home) {
  const p = join(home.dsh, 'profiles/web/package.json');
  const m = JSON.parse(await readFile(p, 'utf8'));
  m.dsh.profile.bundles = m.dsh.profile.bundles.filter((b) => b !== 'dsh-resilience');
  delete m.dependencies['dsh-resilience'];
  await writeFile(p, JSON.stringify(m, null, 2));
  const patch = join(home.dsh, 'profiles/web/cordis.patch.yml');
  const text = await readFile(patch, 'utf8');
  await writeFile(patch, text.replace(/- id: resilience\n {2}config: .*\n/, ''));
}

/** Starts `dsh --profile web` on a free port; resolves when it prints its URL. */
export function startWeb(home) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [DSH_BIN, '--profile', 'web', '--no-open', '--port', '0'], {
      cwd: join(home.dir, 'home'), env: home.env(), stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`dsh web did not start: ${out}\n${err}`)); }, 90_000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /dsh web: (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          url: m[1].replace(/\/$/, ''),
          child,
          stderr: () => err,
          stop: () => new Promise((done) => {
            if (child.exitCode !== null) return done();
            child.once('close', done);
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
          }),
        });
      }
    });
    child.stderr.on('data', (d) => { err += d; });
    child.on('error', reject);
    child.on('close', (code) => { clearTimeout(timer); reject(new Error(`dsh web exited ${code}: ${out}\n${err}`)); });
  });
}

const require = createRequire(join(HOST_DIR, 'node/node_modules/'));
/** Headless Chromium with the flags the project's machines need. */
export async function launchBrowser() {
  const { chromium } = require('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/** A page whose console errors and page errors are collected in `errors`. */
export async function openPage(browser, url, { locale = 'en-US' } = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale });
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e?.message ?? e)));
  await page.goto(url);
  return { page, context, errors };
}

/** A PNG under artifacts/web/ (gitignored); `target` is the page, or a locator for just that part. */
export async function screenshot(target, name, clip) {
  await mkdir(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await target.screenshot({ path, ...(clip ? { clip } : {}) });
  return path;
}

/** The conversation column and the composer, without the sidebar: small enough for the README. */
export const CHAT_CLIP = { x: 380, y: 80, width: 800, height: 770 };
