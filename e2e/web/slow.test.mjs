// The slow-call breaker in the real host (issue #20), web profile, stock
// retries: one host process serving one new session after another, as a
// user's does. A primary slow to its first token (the fake answers after
// SLOW_MS, over slow.firstTokenMs) gets new sessions until slow.minCalls
// slow calls, then stops: the next new session starts on the secondary, and
// the dock and the picker say the primary is slow. Made fast again, the
// primary gets the first new session after the cooldown as the half-open
// probe; its fast first token closes the breaker and new sessions are the
// primary's again.
//
// The slow primary answers after 20 s, as the does: the two slow
// sessions cost 40 s of the suite, and prove the breaker against the delay a
// user reported, not one just over the bound.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeProvider } from '../fake-provider/fake-provider.mjs';
import { auditRecords, ROOT } from '../harness.mjs';
import { launchBrowser, makeWebHome, PRIMARY, screenshot, SECONDARY, startWeb } from './web-harness.mjs';
import { CHIP, DOCK, enterWorkspace, send, until } from './ui.mjs';

const FIRST_TOKEN_MS = 5000; // slow.firstTokenMs
const SLOW_MS = 20_000; // the slow primary's first token
const MIN_CALLS = 2;
// The slow breaker's cooldown (the row's cooldownMs): long enough that the
// session after the trip starts within it even on a loaded machine, short
// enough that the probe comes after a few sessions.
const COOLDOWN_MS = 30_000;
const PRIMARY_KEY = `${PRIMARY.provider}/${PRIMARY.model}`;
const name = (c) => `${c.provider}/${c.model}`;

describe('a primary slow to its first token, in the real web host', { concurrency: false }, () => {
  let fp;
  let home;
  let web;
  let browser;
  let page;
  const errors = [];
  let n = 0;

  before(async () => {
    fp = await startFakeProvider({});
    fp.script(PRIMARY.model, [{ kind: 'success', firstTokenMs: SLOW_MS }]);
    home = await makeWebHome({
      baseURL: fp.baseURL,
      plugin: { chain: [PRIMARY, SECONDARY], cooldownMs: COOLDOWN_MS, slow: { firstTokenMs: FIRST_TOKEN_MS, minCalls: MIN_CALLS } },
    });
    web = await startWeb(home);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await web?.stop();
    await fp?.close();
    await home?.cleanup();
  });

  const ANSWER = /^ok from (\S+)$/;

  /** A new session (the sidebar's New session) with one task; resolves with the model that answered. */
  async function newSession() {
    if (!page) {
      // openPage's 30 s load bound, at a load of 40-60 on this machine, was not enough.
      const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-US', colorScheme: 'light' });
      page = await context.newPage();
      page.setDefaultTimeout(120_000);
      await page.goto(web.url, { timeout: 240_000 });
      page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
      page.on('pageerror', (e) => errors.push(String(e?.message ?? e)));
      await enterWorkspace(page);
    } else {
      await page.getByRole('button', { name: /^(New session|新建会话)$/ }).first().click();
      // The last session's answer leaves the view before this one's is looked for.
      await until(async () => (await page.getByText(ANSWER).count()) === 0, 'an empty new session');
    }
    n += 1;
    await send(page, `slow world task ${n}`);
    const answer = page.getByText(ANSWER).first();
    await answer.waitFor({ timeout: 120_000 });
    return ANSWER.exec((await answer.innerText()).trim())[1];
  }

  const audited = async (type) => (await auditRecords(home)).filter((a) => a.type === type && name(a.channel) === PRIMARY_KEY);

  test(`new sessions answer on the primary until ${MIN_CALLS} slow first tokens; then it is slow and the next starts on the secondary`, async () => {
    for (let i = 0; i < MIN_CALLS; i++) assert.equal(await newSession(), PRIMARY.model, `session ${i + 1} on the primary`);
    const [slow] = await until(async () => { const r = await audited('slow'); return r.length ? r : undefined; }, 'the slow record');
    assert.equal(slow.limitMs, FIRST_TOKEN_MS);
    assert.equal(slow.calls, MIN_CALLS);
    assert.ok(slow.firstTokenMs > FIRST_TOKEN_MS && slow.estimateMs > FIRST_TOKEN_MS, JSON.stringify(slow));
    assert.equal(await newSession(), SECONDARY.model, 'the session after the trip starts on the secondary');
    assert.equal((await audited('slow-probe')).length, 0, 'within the cooldown: no probe yet');
  });

  test('the dock colours the primary slow and the picker marks it', async () => {
    await page.locator(CHIP).click();
    const line = page.locator(`${DOCK} li[data-channel="${PRIMARY_KEY}"]`);
    await until(async () => (await line.getAttribute('data-state')) === 'slow', 'the slow line');
    assert.match(await line.locator('[data-role=state]').innerText(), /^slow · first token \d+\.\d s$/);
    const colour = await line.locator('[data-role=state]').evaluate((e) => getComputedStyle(e).color);
    const healthy = await page.locator(`${DOCK} li[data-channel="${name(SECONDARY)}"] [data-role=state]`).evaluate((e) => getComputedStyle(e).color);
    assert.notEqual(colour, healthy, 'slow has its own colour');
    const item = page.locator(`[role=menu] [data-testid=dsh-resilience-menu-item][data-channel="${PRIMARY_KEY}"]`);
    await item.waitFor();
    assert.equal(await item.getAttribute('data-slow'), 'true');
    assert.match(await item.innerText(), /slow/);
    const shot = await screenshot(page, 'web-slow-dock', { x: 380, y: 220, width: 800, height: 630 });
    // docs/img/web-slow-dock.png is this shot; DOCS_IMG=1 refreshes it (otherwise the tree stays clean).
    if (process.env.DOCS_IMG) {
      await mkdir(join(ROOT, 'docs/img'), { recursive: true });
      await copyFile(shot, join(ROOT, 'docs/img/web-slow-dock.png'));
    }
    await page.keyboard.press('Escape');
  });

  test('made fast again, the primary gets the first new session after the cooldown as the probe, and it closes', async () => {
    fp.script(PRIMARY.model, ['success']);
    // Sessions go to the secondary until the cooldown ends; the first after it probes the primary.
    // Bounded by time, not by a count of sessions: on a fast machine 40 sessions ended
    // inside the 30 s cooldown. The bound only stops a hung run.
    let model;
    const bound = Date.now() + COOLDOWN_MS + 180_000;
    while (model !== PRIMARY.model && Date.now() < bound) model = await newSession();
    assert.equal(model, PRIMARY.model, 'a new session probed the primary');
    const [probe] = await audited('slow-probe');
    assert.ok(probe, 'the probe was audited');
    const [closed] = await until(async () => { const r = await audited('slow-closed'); return r.length ? r : undefined; }, 'the slow-closed record');
    assert.ok(closed.firstTokenMs <= FIRST_TOKEN_MS, JSON.stringify(closed));
    assert.equal(await newSession(), PRIMARY.model, 'new sessions are the primary\'s again');
  });

  test('the pages logged no console errors', () => {
    assert.deepEqual(errors, []);
  });
});
