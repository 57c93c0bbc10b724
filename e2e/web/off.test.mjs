// enabled: false in the real web profile: the host loads the plugin's client
// bundle whatever the row says, so the chip must say the plugin is off (its
// channel answers OFF) rather than "the host does not answer".
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { launchBrowser, makeWebHome, openPage, PRIMARY, SECONDARY, startWeb } from './web-harness.mjs';
import { CHIP, enterWorkspace, until } from './ui.mjs';
import { startFakeProvider } from '../fake-provider/fake-provider.mjs';

describe('the web client with the master switch off', { concurrency: false }, () => {
  let fp;
  let home;
  let web;
  let browser;

  before(async () => {
    fp = await startFakeProvider({});
    home = await makeWebHome({ baseURL: fp.baseURL, plugin: { enabled: false, chain: [PRIMARY, SECONDARY] } });
    web = await startWeb(home);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await web?.stop();
    await fp?.close();
    await home?.cleanup();
  });

  // The Chinese text is the same code path (client/test: chipReason); one locale here.
  {
    test('the chip says the plugin is off', async () => {
      const text = 'Resilience: off (enabled: false)';
      const { page, context, errors } = await openPage(browser, web.url);
      try {
        await enterWorkspace(page);
        const chip = page.locator(CHIP);
        await chip.waitFor();
        await until(async () => (await chip.getAttribute('data-off')) === 'true', 'the chip reads the off answer');
        assert.equal(await chip.innerText(), text);
        assert.equal(await chip.isDisabled(), true);
        assert.deepEqual(errors.filter((e) => /dsh-resilience/i.test(e)), []);
      } finally {
        await context.close();
      }
    });
  }
});
