// The settings card's controls in the real web UI, one host and one browser:
// each control's visible effect in the card, what the host writes for it
// (the `dsh-resilience` section of settings.yaml, backup.json), and for each
// group one check that the running module behaves by it. In order: the draft
// (Unsaved, Discard), the wait (presets, Custom, Default) and keep retrying,
// the unknown-error toggle and its count (the next outage is handed back at
// the new cap), the chain (add, up, down, remove), recovery and the backup
// (the next failover goes by the edited chain, its row saying where), the
// Overridden badge and Reset, and Restore defaults. Then, on a row with its own
// quota keys, Retry on quota (quota.defaultEnabled merged into the row's quota).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeProvider } from '../fake-provider/fake-provider.mjs';
import { auditRecords } from '../harness.mjs';
import { CHAT_CLIP, launchBrowser, makeWebHome, openPage, PRIMARY, screenshot, SECONDARY, startWeb } from './web-harness.mjs';
import { CHIP, enterWorkspace, openPluginSettings, ROW, send, until } from './ui.mjs';
import { cardOf, savedBackup, savedSection } from './card.mjs';

const key = (c) => `${c.provider}/${c.model}`;
const B = key(SECONDARY); // mock/mock-b: the session's model and the row's primary
const FLASH = key(PRIMARY);
const A = 'mock/mock-a';
const PRO = 'deepseek-official/deepseek-v4-pro';
const ch = (k) => ({ provider: k.split('/')[0], model: k.slice(k.indexOf('/') + 1) });
// A 409 the pi-ai route cannot read: PI_AI_ERROR with no status, which the module classes
// unknown and the stock host retry does not retry (as in e2e/unknown-cap.test.mjs).
const UNREADABLE = { kind: 'status', status: 409, message: 'conflict, try again' };

describe('the settings card\'s controls in the real web UI', { concurrency: false }, () => {
  let fp;
  let home;
  let web;
  let browser;
  let page;
  let errors = [];
  let c;

  /** The `reconfigured` audit records so far. */
  const reconfigured = async () => (await auditRecords(home)).filter((a) => a.type === 'reconfigured');
  /**
   * Waits until the reconfigurations after the first `n` have applied every one of `keys`.
   * The card saves a key at a time (the host's settings scope sets one field per call), and
   * the module applies each as it lands: a save of two keys may be one record or two.
   */
  const reconfiguredWith = (n, keys) => until(async () => {
    const done = new Set((await reconfigured()).slice(n).flatMap((r) => r.keys));
    return keys.every((k) => done.has(k));
  }, `a reconfiguration of ${keys}`);
  /** Waits until the saved section passes `ok`. */
  const sectionWhere = (ok, what) => until(async () => { const s = await savedSection(home); return ok(s) && s; }, what);
  const closeSettings = () => page.getByRole('button', { name: 'Close', exact: true }).click();

  before(async () => {
    fp = await startFakeProvider({});
    // The session runs on the pi-ai route (its 409 is an unknown failure); the row's chain
    // is mock-b then the DeepSeek flash. Short same-channel waits keep the retries quick;
    // no probes and no spill, so every request the provider gets is the turn's or a retry's.
    home = await makeWebHome({
      baseURL: fp.baseURL, defaultModel: B,
      plugin: { chain: [SECONDARY, PRIMARY], backoffBaseMs: 100, probes: false, spillAfter: 0 },
    });
    web = await startWeb(home);
    browser = await launchBrowser();
    ({ page, errors } = await openPage(browser, web.url));
    await enterWorkspace(page);
    await page.locator(CHIP).waitFor();
    await openPluginSettings(page);
    c = cardOf(page);
  });
  after(async () => {
    await browser?.close();
    await web?.stop();
    await fp?.close();
    await home?.cleanup();
  });

  test('the card shows the row\'s values; an edit marks it Unsaved, and Discard takes the edit back and writes nothing', async () => {
    const threshold = c.card.locator('[data-field=failureThreshold]');
    await until(async () => (await threshold.inputValue()) === '3', 'the module\'s default threshold');
    assert.deepEqual(await c.chain(), [B, FLASH]);
    assert.equal(await c.picked('backoffMaxMs-preset'), 'Default (30 s)');
    assert.equal(await c.picked('persistent'), 'give up after the recovery time');
    assert.equal(await c.picked('retryUnknown'), 'retry like transient ones');
    assert.equal(await c.card.locator('[data-field=unknownMaxRetries]').inputValue(), '3');
    assert.equal(await c.picked('recovery'), 'return to the primary');
    assert.equal(await c.unsaved.count(), 0);
    assert.equal(await c.card.locator('[data-action=discard]').isDisabled(), true);

    await threshold.fill('7');
    await c.unsaved.waitFor();
    assert.equal(await c.unsaved.innerText(), 'Unsaved');
    await c.chainAction(FLASH, 'up').click();
    assert.deepEqual(await c.chain(), [FLASH, B]);
    await c.pick('backoffMaxMs-preset', 'custom');
    await c.card.locator('input[data-field=backoffMaxMs]').waitFor();
    await c.card.locator('[data-action=discard]').click();
    await c.unsaved.waitFor({ state: 'detached' });
    assert.equal(await threshold.inputValue(), '3');
    assert.equal(await c.picked('backoffMaxMs-preset'), 'Default (30 s)', 'the wait back on Default, its Custom field gone');
    assert.equal(await c.card.locator('input[data-field=backoffMaxMs]').count(), 0);
    assert.deepEqual(await c.chain(), [B, FLASH]);
    assert.deepEqual(await savedSection(home), {}, 'nothing written');
    assert.equal((await reconfigured()).length, 0);
  });

  test('the wait: a preset, Default (30 s, or 1 min with keep retrying) and Custom, each saved as the user chose it', async () => {
    const n = (await reconfigured()).length;
    await c.pick('backoffMaxMs-preset', '5000');
    assert.equal(await c.picked('backoffMaxMs-preset'), '5 s');
    await c.unsaved.waitFor();
    await c.save();
    await sectionWhere((s) => s.backoffMaxMs === 5000, 'backoffMaxMs 5000 in settings.yaml');
    await reconfiguredWith(n, ['backoffMaxMs']);
    assert.equal(await c.badge('backoffMaxMs-preset').innerText(), 'Overridden');
    assert.equal(await c.unsaved.count(), 0);

    // Keep retrying on: Default now means reconnect's 1 min.
    const m = (await reconfigured()).length;
    await c.pick('persistent', 'on');
    assert.equal(await c.picked('persistent'), 'until the turn is cancelled');
    await c.card.locator('[data-field="backoffMaxMs-preset"]').click();
    const options = page.locator('[role=menu] [data-dshr-option]');
    await until(async () => (await options.count()) === 9, 'Default, seven presets and Custom');
    assert.deepEqual(await options.allInnerTexts(), ['Default (1 min)', '1 s', '2 s', '5 s', '10 s', '30 s', '1 min', '2 min', 'Custom…']);
    await screenshot(page, 'settings-card-wait-presets');
    await page.locator('[role=menu] [data-dshr-option="default"]').click();
    assert.equal(await c.picked('backoffMaxMs-preset'), 'Default (1 min)');
    await c.save();
    const s = await sectionWhere((x) => x.persistent === true && !('backoffMaxMs' in x), 'persistent on and the wait unset');
    assert.equal(s.backoffMaxMs, undefined, 'Default leaves the wait unset: the module picks it for the mode');
    await reconfiguredWith(m, ['persistent', 'backoffMaxMs']);
    assert.equal(await c.picked('backoffMaxMs-preset'), 'Default (1 min)', 'the saved card shows what was saved');
    assert.equal(await c.unsaved.count(), 0);

    const k = (await reconfigured()).length;
    await c.pick('backoffMaxMs-preset', 'custom');
    const ms = c.card.locator('input[data-field=backoffMaxMs]');
    await ms.waitFor();
    await ms.fill('150');
    assert.equal(await c.picked('backoffMaxMs-preset'), 'Custom…');
    await c.save();
    await sectionWhere((x) => x.backoffMaxMs === 150, 'backoffMaxMs 150 in settings.yaml');
    await reconfiguredWith(k, ['backoffMaxMs']);
  });

  test('unknown errors: the toggle off and its count saved, and the next outage is handed back at the new cap', async () => {
    const n = (await reconfigured()).length;
    await c.pick('retryUnknown', 'off');
    assert.equal(await c.picked('retryUnknown'), 'cap the retries');
    await c.card.locator('[data-field=unknownMaxRetries]').fill('2');
    await c.save();
    await sectionWhere((s) => s.retryUnknown === false && s.unknownMaxRetries === 2, 'retryUnknown false, unknownMaxRetries 2');
    await reconfiguredWith(n, ['retryUnknown', 'unknownMaxRetries']);
    await screenshot(c.card, 'settings-card-unknown');
    await closeSettings();

    // Four unreadable failures, then an answer: keep retrying alone would ride them out
    // (e2e/unknown-cap.test.mjs); the cap of 2 hands the third back.
    fp.reset();
    fp.script(SECONDARY.model, [UNREADABLE, UNREADABLE, UNREADABLE, UNREADABLE, { kind: 'success', text: 'the route is back' }]);
    await send(page, 'Unknown outage');
    const row = page.locator(`${ROW}[data-kind=give-up]`);
    await row.waitFor({ timeout: 60_000 });
    assert.deepEqual(fp.counts(), { [SECONDARY.model]: 3 }, 'the first request and two retries');
    const audit = await auditRecords(home);
    const giveUp = audit.find((a) => a.type === 'give-up');
    assert.equal(giveUp.reason, 'unknown-retries-spent');
    const retries = audit.filter((a) => a.type === 'retry');
    assert.equal(retries.length, 2);
    assert.ok(retries.every((r) => r.delayMs <= 150), `every wait within the custom 150 ms: ${retries.map((r) => r.delayMs)}`);
    assert.equal(await row.locator('summary').innerText(), `Gave up on ${B}: unknown-error retries spent (PI_AI_ERROR)`);
    await row.locator('summary').click();
    const details = await row.locator('dl').innerText();
    assert.match(details, /Where\s+turn 1 step 1/, details);
    await until(async () => (await page.locator(CHIP).getAttribute('data-tone')) === 'error', 'a red chip');
    await screenshot(page, 'card-unknown-give-up-row', CHAT_CLIP);
  });

  test('the chain: add, up, down and remove, recovery and the backup saved; the next failover goes by the edited chain and its row says where', async () => {
    await openPluginSettings(page);
    const n = (await reconfigured()).length;
    assert.equal(await c.chainAction(B, 'up').isDisabled(), true, 'the first cannot move up');
    assert.equal(await c.chainAction(FLASH, 'down').isDisabled(), true, 'the last cannot move down');
    await c.pick('chain-add', A);
    await c.pick('chain-add', PRO);
    assert.deepEqual(await c.chain(), [B, FLASH, A, PRO]);
    await c.chainAction(A, 'up').click();
    assert.deepEqual(await c.chain(), [B, A, FLASH, PRO]);
    await c.chainAction(FLASH, 'down').click();
    assert.deepEqual(await c.chain(), [B, A, PRO, FLASH]);
    await c.chainAction(FLASH, 'remove').click();
    assert.deepEqual(await c.chain(), [B, A, PRO]);
    await c.pick('recovery', 'stay');
    assert.equal(await c.picked('recovery'), 'stay on the backup');
    await screenshot(c.card, 'settings-card-chain');
    await c.save();
    await sectionWhere((s) => JSON.stringify(s.chain) === JSON.stringify([B, A, PRO].map(ch)) && s.recovery === 'stay', 'the edited chain and recovery stay');
    await reconfiguredWith(n, ['chain', 'recovery']);
    await closeSettings();

    // mock-b's balance is spent: the session fails over to the card's second, not the row's.
    fp.reset();
    fp.script(SECONDARY.model, ['insufficient_balance']);
    fp.script('mock-a', [{ kind: 'success', text: 'answer from mock-a' }]);
    await send(page, 'Chain turn');
    await page.getByText('answer from mock-a').waitFor({ timeout: 30_000 });
    assert.deepEqual(fp.counts(), { [SECONDARY.model]: 1, 'mock-a': 1 });
    const row = page.locator(`${ROW}[data-kind=failover]`);
    await row.waitFor();
    assert.equal(await row.locator('summary').innerText(), `${B} failed (QUOTA) → ${A}`);
    await row.locator('summary').click();
    const details = await until(async () => { const d = await row.locator('dl').innerText(); return /Where/.test(d) && d; }, 'the row\'s Where line');
    assert.match(details, /Where\s+failover 1\/4 · turn 2 step 1/, details);
    // The chip follows: the last turn's give-up is over, and the next target is never where the session is.
    await until(async () => { const t = await page.locator(CHIP).innerText(); return !/Gave up/.test(t) && !/Next: mock\/mock-a/.test(t) && t; }, 'the chip after the failover', 20_000);
    await screenshot(page, 'card-chain-failover-row', CHAT_CLIP);

    // The backup: chosen in the card, kept in backup.json, named by the chip.
    await openPluginSettings(page);
    await c.pick('backup', PRO);
    await c.unsaved.waitFor();
    await c.save();
    await until(async () => (await savedBackup(home)) === PRO, 'backup.json naming the pro');
    assert.deepEqual((await auditRecords(home)).filter((a) => a.type === 'backup').map((a) => [key(a.channel), a.source]), [[PRO, 'web']]);
    await until(async () => (await page.locator(CHIP).innerText()) === `Backup: ${PRO}`, 'the chip naming the backup');
  });

  test('Overridden and Reset: a field the user set is badged; Reset takes it back to the row\'s value and Save removes it from settings.yaml', async () => {
    const threshold = c.card.locator('[data-field=failureThreshold]');
    await threshold.fill('5');
    await c.save();
    await sectionWhere((s) => s.failureThreshold === 5, 'failureThreshold 5');
    for (const f of ['failureThreshold', 'backoffMaxMs-preset', 'persistent', 'retryUnknown', 'unknownMaxRetries', 'recovery', 'chain']) {
      assert.equal(await c.badge(f).innerText(), 'Overridden', f);
    }
    assert.equal(await c.badge('cooldownMs').count(), 0, 'a field the user never set has no badge');
    assert.equal(await c.reset('cooldownMs').count(), 0);
    await screenshot(c.card, 'settings-card-overridden');

    const n = (await reconfigured()).length;
    await c.reset('failureThreshold').click();
    await c.reset('retryUnknown').click();
    await c.reset('chain').click();
    await c.reset('backoffMaxMs').click();
    // Each field shows what it falls back to: the module's default, or the row's own value.
    assert.equal(await threshold.inputValue(), '3');
    assert.equal(await c.picked('retryUnknown'), 'retry like transient ones');
    assert.deepEqual(await c.chain(), [B, FLASH]);
    assert.equal(await c.picked('backoffMaxMs-preset'), 'Default (1 min)', 'unset, with keep retrying still on');
    assert.equal(await c.card.locator('input[data-field=backoffMaxMs]').count(), 0);
    assert.equal(await c.badge('failureThreshold').count(), 0);
    assert.equal(await c.badge('chain').count(), 0);
    await c.unsaved.waitFor();
    await screenshot(c.card, 'settings-card-reset');
    await c.save();
    const gone = ['failureThreshold', 'retryUnknown', 'chain', 'backoffMaxMs'];
    const s = await sectionWhere((x) => gone.every((k) => !(k in x)), `${gone} gone from settings.yaml`);
    assert.equal(s.unknownMaxRetries, 2, 'the rest stays');
    assert.equal(s.recovery, 'stay');
    await reconfiguredWith(n, ['chain', 'failureThreshold', 'retryUnknown', 'backoffMaxMs']);
    assert.equal(await c.unsaved.count(), 0);
    assert.equal(await c.badge('failureThreshold').count(), 0);
  });

  test('Restore defaults: the section and the backup cleared, the card back on the row\'s values, the chip on the row\'s chain', async () => {
    const n = (await reconfigured()).length;
    await c.card.locator('[data-action=restore]').click();
    await c.card.locator('[data-role=note][data-kind=ok]').waitFor();
    await sectionWhere((s) => Object.keys(s).length === 0, 'an empty section');
    await until(async () => (await savedBackup(home)) === null, 'backup.json cleared');
    await reconfiguredWith(n, ['persistent']);
    const threshold = c.card.locator('[data-field=failureThreshold]');
    await until(async () => (await threshold.inputValue()) === '3', 'the card redrawn from the row');
    assert.deepEqual(await c.chain(), [B, FLASH]);
    assert.equal(await c.picked('backoffMaxMs-preset'), 'Default (30 s)');
    assert.equal(await c.picked('persistent'), 'give up after the recovery time');
    assert.equal(await c.picked('recovery'), 'return to the primary');
    assert.equal(await c.card.locator('.dshr-fhead .dshr-pill').count(), 0, 'nothing overridden');
    assert.equal(await c.unsaved.count(), 0);
    // The module runs the row again: no backup, the row's chain (mock-b is open: the flash is next).
    await until(async () => (await page.locator(CHIP).innerText()) === `Next: ${FLASH}`, 'the chip on the row\'s chain');
    await screenshot(c.card, 'settings-card-restored');
  });

  test('the page logged no console errors', () => {
    assert.deepEqual(errors, []);
  });
});

// dsh-reconnect's "Retry on quota" (issue #35), on a row with its own quota keys and no chain:
// the card writes quota.defaultEnabled alone, the host merges it into the row's quota object,
// and the module waits the next spent allowance out at the row's own longTermDelayMs.
describe('Retry on quota in the real web UI: one nested key beside the row\'s own quota', { concurrency: false }, () => {
  const ownQuota = { defaultEnabled: false, longTermDelayMs: 1500, exhaustedCooldownMs: 900000 };
  let fp;
  let home;
  let web;
  let browser;
  let page;
  let errors = [];

  before(async () => {
    fp = await startFakeProvider({});
    home = await makeWebHome({ baseURL: fp.baseURL, defaultModel: B, plugin: { probes: false, quota: ownQuota } });
    web = await startWeb(home);
    browser = await launchBrowser();
    ({ page, errors } = await openPage(browser, web.url));
    await enterWorkspace(page);
    await page.locator(CHIP).waitFor();
  });
  after(async () => {
    await browser?.close();
    await web?.stop();
    await fp?.close();
    await home?.cleanup();
  });

  test('toggled on: settings.yaml holds only quota.defaultEnabled, the row keeps its quota keys, and the next spent allowance is waited out on its route', async () => {
    const patch = join(home.dsh, 'profiles/web/cordis.patch.yml');
    const rowBefore = await readFile(patch, 'utf8');
    await openPluginSettings(page);
    const c = cardOf(page);
    await until(async () => (await c.picked('quota')) === 'fail over, else hand it back', 'the row\'s switch: off');
    await c.pick('quota', 'on');
    assert.equal(await c.picked('quota'), 'wait out a spent allowance');
    await c.save();
    const s = await until(async () => { const x = await savedSection(home); return x.quota && x; }, 'quota in settings.yaml');
    assert.deepEqual(s, { quota: { defaultEnabled: true } }, 'the one nested key, nothing else');
    assert.equal(await readFile(patch, 'utf8'), rowBefore, 'the row\'s own quota keys untouched');
    await until(async () => (await auditRecords(home)).some((a) => a.type === 'reconfigured' && a.keys.includes('quota')), 'the module reconfigured with quota');
    assert.equal(await c.badge('quota').innerText(), 'Overridden');
    await screenshot(c.card, 'settings-card-quota');
    await page.getByRole('button', { name: 'Close', exact: true }).click();

    // A spent allowance with nowhere else to go: the row's switch was off (handed back);
    // on from the card, it is waited out on the same route at the row's 1.5 s, then recovers.
    fp.reset();
    fp.script(SECONDARY.model, ['insufficient_balance', { kind: 'success', text: 'the allowance is back' }]);
    await send(page, 'Spent allowance');
    const left = await until(async () => (await auditRecords(home)).find((a) => a.type === 'quota-wait-left'), 'the wait left');
    assert.equal(left.reason, 'recovered');
    const audit = await auditRecords(home);
    const retries = audit.filter((a) => a.type === 'retry');
    assert.deepEqual(retries.map((r) => [key(r.channel), r.delayMs, r.code]), [[B, 1500, 'QUOTA']], 'the same route, the row\'s own longTermDelayMs');
    assert.deepEqual(fp.counts(), { [SECONDARY.model]: 2 });
  });

  test('the page logged no console errors', () => {
    assert.deepEqual(errors, []);
  });
});
