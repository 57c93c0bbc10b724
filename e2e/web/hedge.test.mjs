// The hedge row in the real web UI (issue #36): a primary whose first token
// comes only after 20 s is hedged after hedge.afterMs (short, to keep the
// test quick) to the chain's secondary, which answers. The host logs nothing
// of the race, so the row is the plugin's `hedge` audit record placed at the
// request it belongs to: it says who won, the time saved, what the aborted
// call had cost, and both channels, and it is still there after a reload.
// A second turn, on a channel that answers at once, makes no row.
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeProvider } from '../fake-provider/fake-provider.mjs';
import { auditRecords, ROOT } from '../harness.mjs';
import { CHAT_CLIP, launchBrowser, makeWebHome, openPage, PRIMARY, screenshot, SECONDARY, startWeb } from './web-harness.mjs';
import { enterWorkspace, openSession, ROW, send, until } from './ui.mjs';

const PRIMARY_KEY = `${PRIMARY.provider}/${PRIMARY.model}`;
const SECONDARY_KEY = `${SECONDARY.provider}/${SECONDARY.model}`;
const SLOW_MS = 20_000;
const AFTER_MS = 300;
const TITLE = 'Hedge me';

/** `1.2 s`, as the row words a duration. */
const s = (ms) => `${(ms / 1000).toFixed(1)} s`;

describe('the hedge row in the real web UI', { concurrency: false }, () => {
  let fp;
  let browser;
  let home;
  let web;
  let page;
  let errors = [];
  before(async () => {
    fp = await startFakeProvider({});
    browser = await launchBrowser();
    home = await makeWebHome({ baseURL: fp.baseURL, plugin: { chain: [PRIMARY, SECONDARY], hedge: { afterMs: AFTER_MS } } });
    web = await startWeb(home);
    const p = await openPage(browser, web.url);
    page = p.page;
    errors = p.errors;
    await enterWorkspace(page);
  });
  after(async () => {
    await browser?.close();
    await web?.stop();
    await home?.cleanup();
    await fp?.close();
  });

  test('a slow primary hedged to the secondary: one row, who won, what it saved and cost, both channels', async () => {
    fp.script(PRIMARY.model, [{ kind: 'success', firstTokenMs: SLOW_MS, text: 'late answer from the primary' }]);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'answer from the secondary' }]);

    await send(page, TITLE);
    await page.getByText('answer from the secondary').waitFor({ timeout: 30_000 });
    const row = page.locator(`${ROW}[data-kind=hedge]`);
    await row.waitFor({ timeout: 30_000 });

    const hedge = (await auditRecords(home)).find((a) => a.type === 'hedge');
    assert.deepEqual([hedge.from, hedge.to, hedge.winner, hedge.afterMs], [PRIMARY, SECONDARY, 'hedge', AFTER_MS]);
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 1, [SECONDARY.model]: 1 }, 'one request each');
    assert.equal(await page.getByText('late answer from the primary').count(), 0, 'nothing of the loser reaches the page');
    // The first hedge of a channel has no median of the primary to save against: the row says so.
    const saved = hedge.savedMs === undefined ? '' : ` (${s(hedge.savedMs)} saved)`;
    assert.equal(await row.locator('summary').innerText(),
      `${PRIMARY_KEY} silent for ${s(AFTER_MS)}: hedged to ${SECONDARY_KEY}, which answered first${saved}`);
    assert.equal(await page.locator(ROW).count(), 1, 'a hedge is not a failover: no other row');

    await row.locator('summary').click();
    await row.locator('dl').waitFor();
    const details = await row.locator('dl').evaluate((dl) => {
      const out = [];
      for (const dt of dl.querySelectorAll('dt')) out.push([dt.textContent, dt.nextElementSibling?.textContent]);
      return out;
    });
    assert.deepEqual(details, [
      ['Winner', `the hedge, ${SECONDARY_KEY}`],
      ['First token', s(hedge.firstTokenMs)],
      ['Time saved', hedge.savedMs === undefined ? 'not known yet (no first token of the first channel measured)' : s(hedge.savedMs)],
      ['Aborted call', `${PRIMARY_KEY}, after ${s(hedge.loserWaitMs)} with no answer`],
      ['Sent after', `${s(AFTER_MS)} (hedge.afterMs)`],
    ]);
    const shot = await screenshot(page, 'web-hedge-row', CHAT_CLIP);
    // docs/img/web-hedge-row.png is this shot; DOCS_IMG=1 refreshes it (otherwise the tree stays clean).
    if (process.env.DOCS_IMG) await copyFile(shot, join(ROOT, 'docs', 'img', 'web-hedge-row.png'));
  });

  test('a turn answered at once makes no hedge row', async () => {
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'quick second answer' }]);
    fp.script(PRIMARY.model, [{ kind: 'success', text: 'quick second answer' }]);
    const asked = [];
    const onRequest = (r) => { if (r.url().includes('/dsh-resilience/rows')) asked.push(r); };
    page.on('request', onRequest);
    await send(page, 'And again');
    await page.getByText('quick second answer').waitFor({ timeout: 30_000 });
    // The new request's hedge candidate asks for the session's records (the row
    // hedges): once that answer is in, the page knows what the audit holds.
    await until(() => asked.length > 0, "the page's look at the records after the second turn");
    await asked.at(-1).response();
    page.off('request', onRequest);
    assert.equal((await auditRecords(home)).filter((a) => a.type === 'hedge').length, 1, 'the module hedged nothing more');
    assert.deepEqual(await page.locator(ROW).evaluateAll((es) => es.map((e) => e.getAttribute('data-kind'))), ['hedge']);
  });

  test('the hedge row is still there after a page reload (rebuilt from the session and the audit)', async () => {
    await page.reload();
    await openSession(page, TITLE);
    const row = page.locator(`${ROW}[data-kind=hedge]`);
    await row.waitFor({ timeout: 15_000 });
    assert.match(await row.locator('summary').innerText(), new RegExp(`^${PRIMARY_KEY} silent for ${s(AFTER_MS).replace('.', '\\.')}: hedged to ${SECONDARY_KEY}`));
  });

  test('no console errors', () => {
    assert.deepEqual(errors, []);
  });
});
