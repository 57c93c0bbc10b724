// The chip's Menu with quota rules configured: the session's quota switch and
// pool, in the real web profile against the fake provider. A pool chosen in
// the menu is what `/resilience pool status` reports and where the next
// request goes; the switch turned off in the menu is what status reports;
// a typed command shows in the menu at once (one write path); after a host
// restart the chip says of the pooled session what it said before.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeProvider } from '../fake-provider/fake-provider.mjs';
import { auditRecords } from '../harness.mjs';
import { CHAT_CLIP, launchBrowser, makeWebHome, openPage, PRIMARY, screenshot, SECONDARY, startWeb } from './web-harness.mjs';
import { CHIP, enterWorkspace, openSession, send, until } from './ui.mjs';

const POOLS = [{ name: 'main', routes: [PRIMARY, SECONDARY] }, { name: 'spare', routes: [{ provider: 'mock', model: 'mock-a' }] }];
const QUOTA = '[role=menu] [data-testid=dsh-resilience-quota]';
const POOL = '[role=menu] [data-testid=dsh-resilience-pool]';

describe('the quota switch and pool in the chip\'s menu', { concurrency: false }, () => {
  let fp;
  let home;
  let web;
  let browser;
  let page;
  let errors = [];

  const openMenu = async () => {
    await page.locator(CHIP).click();
    await page.locator(`${POOL}[data-pool="spare"]`).waitFor({ timeout: 15_000 });
  };
  const current = async (sel) => page.locator(`${sel}[data-current=true]`).evaluateAll((es) => es.map((e) => e.getAttribute('data-pool') ?? e.getAttribute('data-quota')));

  before(async () => {
    fp = await startFakeProvider({});
    home = await makeWebHome({ baseURL: fp.baseURL, plugin: { chain: [PRIMARY, SECONDARY], pools: POOLS, probes: false } });
    web = await startWeb(home);
    browser = await launchBrowser();
    ({ page, errors } = await openPage(browser, web.url));
    await enterWorkspace(page);
  });
  after(async () => {
    await browser?.close();
    await web?.stop();
    await fp?.close();
    await home?.cleanup();
  });

  test('a pool chosen in the menu: status reports it and the next request goes to its route', async () => {
    fp.reset();
    fp.script(PRIMARY.model, [{ kind: 'success', text: 'first answer' }]);
    await send(page, 'Reply with OK');
    await page.getByText('first answer').waitFor({ timeout: 30_000 });
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 1 });

    await openMenu();
    assert.deepEqual(await page.locator(POOL).evaluateAll((es) => es.map((e) => e.getAttribute('data-pool'))), ['main', 'spare', 'off', 'default']);
    assert.deepEqual(await page.locator(QUOTA).evaluateAll((es) => es.map((e) => e.getAttribute('data-quota'))), ['on', 'off', 'default']);
    assert.deepEqual(await current(QUOTA), ['default']);
    await page.locator(`${POOL}[data-pool="spare"]`).click();
    await page.locator('[role=menu]').waitFor({ state: 'hidden' });
    // The audit log is appended on its own queue: set-pool answers (and the
    // menu closes) before the line is on disk, so wait for the line.
    await until(async () => (await auditRecords(home)).some((a) => a.type === 'quota-pool' && a.pool === 'spare'), 'the quota-pool audit record');

    await send(page, '/resilience pool status');
    await page.getByText(/pool: spare \(session\)/).first().waitFor({ timeout: 15_000 });

    fp.reset();
    fp.script('mock-a', [{ kind: 'success', text: 'answer from the spare pool' }]);
    await send(page, 'Reply again');
    await page.getByText('answer from the spare pool').waitFor({ timeout: 30_000 });
    assert.deepEqual(fp.counts(), { 'mock-a': 1 }, 'the next request went to the spare pool\'s route');

    await openMenu();
    await until(async () => (await current(POOL)).join() === 'spare', 'the menu to mark the chosen pool');
    await screenshot(page, 'chip-menu-quota-and-pool', CHAT_CLIP);
  });

  test('the quota switch turned off in the menu is what status reports; a typed command shows in the menu at once', async () => {
    await page.locator(`${QUOTA}[data-quota="off"]`).click();
    await page.locator('[role=menu]').waitFor({ state: 'hidden' });
    await send(page, '/resilience quota status');
    await page.getByText(/quota retry: off \(set for this session\)/).first().waitFor({ timeout: 15_000 });
    await until(async () => (await auditRecords(home)).some((a) => a.type === 'quota-switch' && a.mode === 'off'), 'the quota-switch audit record');

    await send(page, '/resilience quota on');
    await page.getByText(/quota retry: on \(set for this session\)/).first().waitFor({ timeout: 15_000 });
    await openMenu();
    await until(async () => (await current(QUOTA)).join() === 'on', 'the menu to follow the typed command');
    assert.match(await page.locator('[role=menu]').innerText(), /Quota retry: On \(this session\)/);
    await page.keyboard.press('Escape');
    assert.deepEqual(errors, []);
  });

  test('after a host restart the chip says of the pooled session what it said before', async () => {
    // The session is in the pool it chose, `spare`, whose one route it runs
    // on: a failure would find no other route of its pool. A restarted
    // module once looked at it as outside any pool until its first request,
    // and the chip named the chain's primary.
    const chip = page.locator(CHIP);
    const before = await until(async () => { const t = await chip.innerText(); return /\S/.test(t) && t; }, 'the chip before the restart');
    assert.doesNotMatch(before, new RegExp(`Next: ${PRIMARY.provider}/${PRIMARY.model}`));
    await web.stop();
    web = await startWeb(home);
    await page.context().close();
    ({ page, errors } = await openPage(browser, web.url));
    await enterWorkspace(page, { choose: false });
    await openSession(page, 'Reply with OK');
    await until(async () => (await page.locator(CHIP).innerText()) === before, `the chip after the restart as before it (${before})`);
    await screenshot(page, 'chip-pooled-after-host-restart', CHAT_CLIP);
    assert.deepEqual(errors, []);
  });
});
