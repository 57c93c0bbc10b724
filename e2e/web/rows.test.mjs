// The return and give-up rows in the real web UI: a primary that recovers
// (its probe succeeds) gets the session back, and the row says so; a turn
// the plugin gives up on ends red, in the row and on the chip.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeProvider } from '../fake-provider/fake-provider.mjs';
import { auditRecords } from '../harness.mjs';
import { CHAT_CLIP, launchBrowser, makeWebHome, openPage, PRIMARY, screenshot, SECONDARY, startWeb } from './web-harness.mjs';
import { CHIP, enterWorkspace, ROW, send, until } from './ui.mjs';

const PRIMARY_KEY = `${PRIMARY.provider}/${PRIMARY.model}`;
const SECONDARY_KEY = `${SECONDARY.provider}/${SECONDARY.model}`;

describe('return and give-up rows in the real web UI', { concurrency: false }, () => {
  let fp;
  let browser;
  const errors = [];
  before(async () => {
    fp = await startFakeProvider({});
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await fp?.close();
  });

  /** A home, its host and a page in a workspace; all closed by the test's end. */
  async function session(t, plugin, locale) {
    const home = await makeWebHome({ baseURL: fp.baseURL, plugin, locale });
    const web = await startWeb(home);
    const p = await openPage(browser, web.url);
    t.after(async () => { errors.push(...p.errors); await p.context.close(); await web.stop(); await home.cleanup(); });
    await enterWorkspace(p.page);
    return { home, web, page: p.page, errors: p.errors };
  }

  test('the primary comes back (its probe succeeds): the next turn returns to it, and the row says so', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, ['insufficient_balance', { kind: 'success', text: 'back on the primary' }]);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'from the secondary' }]);
    const { home, page } = await session(t, { chain: [PRIMARY, SECONDARY], cooldownMs: 1500 });

    await send(page, 'First turn');
    await page.getByText('from the secondary').waitFor({ timeout: 30_000 });
    await until(async () => (await auditRecords(home)).some((a) => a.type === 'probe-result' && a.ok), 'the probe to close the primary');
    await send(page, 'Second turn');
    await page.getByText('back on the primary').waitFor({ timeout: 30_000 });

    // The 402, the plugin's probe (success), the second turn: all on the primary.
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 3, [SECONDARY.model]: 1 });
    const rows = page.locator(ROW);
    await until(async () => (await rows.count()) === 2, 'a failover row and a return row');
    assert.deepEqual(await rows.evaluateAll((es) => es.map((e) => e.getAttribute('data-kind'))), ['failover', 'return']);
    assert.equal(await rows.nth(0).locator('summary').innerText(), `${PRIMARY_KEY} failed (QUOTA) → ${SECONDARY_KEY}`);
    assert.equal(await rows.nth(1).innerText(), `Back on ${PRIMARY_KEY}`);
    assert.ok((await auditRecords(home)).some((a) => a.type === 'return' && a.to === PRIMARY_KEY && a.from === SECONDARY_KEY));
    await screenshot(page, 'return-row', CHAT_CLIP);
  });

  test('nothing routable within giveUpAfterMs: the turn ends, with a red row and a red chip', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, ['insufficient_balance']);
    fp.script(SECONDARY.model, ['insufficient_balance']);
    const { home, page } = await session(t, { chain: [PRIMARY, SECONDARY], giveUpAfterMs: 1000, probes: false });

    await send(page, 'Doomed turn');
    const row = page.locator(`${ROW}[data-kind=give-up]`);
    await row.waitFor({ timeout: 30_000 });
    const giveUp = (await auditRecords(home)).find((a) => a.type === 'give-up');
    assert.equal(giveUp.reason, 'recovery-timeout');
    const tried = giveUp.tried.map((x) => `${x.channel.provider}/${x.channel.model} (${x.code})`).join(', ');
    assert.equal(await row.locator('summary').innerText(), `Gave up on ${giveUp.channel.provider}/${giveUp.channel.model}: recovery took too long (QUOTA); tried ${tried}`);
    await until(async () => (await page.locator(CHIP).getAttribute('data-tone')) === 'error', 'a red chip');
    assert.equal(await page.locator(CHIP).innerText(), 'Gave up: recovery took too long');
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 1, [SECONDARY.model]: 1 });
    // The host's chevron, not the browser's ▶; expanded, the row lists what was
    // tried when the record carries it.
    assert.equal(await row.locator('summary svg').count(), 1);
    await row.locator('summary').click();
    await row.locator('dl').waitFor();
    if (Array.isArray(giveUp.tried) && giveUp.tried.length) assert.ok(await row.locator('[data-role=tried] li').count() >= 1, await row.innerText());
    await screenshot(page, 'give-up-row', CHAT_CLIP);
  });

  test('with the host\'s locale set to Chinese, the chip, the picker and the rows speak it', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, ['insufficient_balance']);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'from the secondary' }]);
    const { page } = await session(t, { chain: [PRIMARY, SECONDARY] }, 'zh');

    await until(async () => (await page.locator(CHIP).innerText()) === `下一个：${SECONDARY_KEY}`, 'the chip in Chinese');
    await send(page, '你好');
    await page.getByText('from the secondary').waitFor({ timeout: 30_000 });
    const row = page.locator(`${ROW}[data-kind=failover]`);
    await row.waitFor();
    assert.equal(await row.locator('summary').innerText(), `${PRIMARY_KEY} 失败（QUOTA）→ ${SECONDARY_KEY}`);
    await page.locator(CHIP).click();
    await page.locator('[role=menu] [data-channel=""]').waitFor();
    assert.equal(await page.locator('[role=menu] [data-channel=""]').innerText(), '按链顺序');
    await page.keyboard.press('Escape');
  });

  test('when the host does not answer on the plugin\'s channel, the chip renders disabled with the reason', async (t) => {
    const { page, errors: pageErrors } = await session(t, { chain: [PRIMARY, SECONDARY] });
    await page.locator(CHIP).waitFor();
    // From now on every call to the plugin's RPC channel fails, as with a host half that is gone.
    await page.route((url) => url.pathname.startsWith('/dsh-resilience/'), (route) => route.abort());
    await page.reload();
    const chip = page.locator(`${CHIP}[data-tone=off]`);
    await chip.waitFor({ timeout: 15_000 });
    assert.equal(await chip.isDisabled(), true);
    assert.equal(await chip.getAttribute('data-disabled-reason'), 'Resilience: the host does not answer');
    assert.equal(await page.locator('[data-composer-card] textarea').isEditable(), true, 'the rest of the UI works');
    // The browser logs each request this test aborts as a failed load; anything else still counts.
    const caused = (m) => /Failed to load resource|ERR_FAILED/.test(m);
    const rest = pageErrors.filter((m) => !caused(m));
    pageErrors.splice(0, pageErrors.length, ...rest);
  });

  test('no console errors', () => {
    assert.deepEqual(errors, []);
  });
});
