// The real web profile (`dsh --profile web`) for the browser tests: an
// isolated DSH_HOME with the plugin installed by `dsh plugin add` of the
// packed tarball, providers pointed at the project's fake provider, the
// server started and stopped like a user's, and headless Chromium (Debian's,
// driven by playwright-core) with its console watched.
import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { DSH_BIN, HOST_DIR, makeHome, PRIMARY, ROOT, SECONDARY } from '../harness.mjs';

export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const ARTIFACTS = join(ROOT, 'artifacts', 'web');
export { PRIMARY, SECONDARY };

/**
 * A fresh isolated home for one test, with the web profile: the routes run
 * the host's stock retry settings unless `primaryRetry` sets the DeepSeek
 * route's (see makeHome for the other options: plugin, locale, ...).
 */
export function makeWebHome(o) {
  return makeHome({ ...o, profile: 'web', primaryRetry: o.primaryRetry ?? 'stock', secondaryRetry: 'stock' });
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
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`dsh web did not start: ${out}\n${err}`)); }, 240_000);
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
export async function openPage(browser, url, { locale = 'en-US', colorScheme = 'light', width = 1280 } = {}) {
  // The host's theme follows the system's by default: colorScheme picks it.
  const context = await browser.newContext({ viewport: { width, height: 860 }, locale, colorScheme });
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
