// What the settings card's tests read and do beside the page: the files the
// host writes for it (the `dsh-resilience` section of settings.yaml, the
// backup's backup.json) and the card's own controls by their hooks.
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { HOST_DIR } from '../harness.mjs';
import { CARD, pick } from './ui.mjs';

// The host's own YAML parser: the file is the host's, read the way it reads it.
const { parse } = createRequire(join(HOST_DIR, 'host/node_modules/'))('yaml');

/** The card's section of the home's settings.yaml as the host wrote it ({} when there is none). */
export async function savedSection(home) {
  const doc = parse(await readFile(join(home.dsh, 'settings.yaml'), 'utf8')) ?? {};
  return doc['dsh-resilience'] ?? {};
}

/** The backup the host keeps (`provider/model`), or null when none is chosen. */
export async function savedBackup(home) {
  const p = join(home.dsh, 'dsh-resilience/backup.json');
  if (!existsSync(p)) return null;
  const c = JSON.parse(await readFile(p, 'utf8')).channel;
  return c ? `${c.provider}/${c.model}` : null;
}

/** The card's parts a test looks at, on one page. */
export function cardOf(page) {
  const card = page.locator(CARD);
  /** The field (label, badge, Reset, control, hint) holding the control `data-field=name`. */
  const field = (name) => card.locator('.dshr-field').filter({ has: page.locator(`[data-field="${name}"]`) });
  return {
    card,
    field,
    /** The `Unsaved` pill on the header. */
    unsaved: card.locator('[data-role=card-header] .dshr-pill'),
    /** A field's `Overridden` badge. */
    badge: (name) => field(name).locator('.dshr-fhead .dshr-pill'),
    /** A field's Reset button. */
    reset: (key) => card.locator(`[data-action="reset-${key}"]`),
    /** The text on a picker's button. */
    picked: (name) => card.locator(`[data-field="${name}"]`).innerText(),
    /** The chain as the card lists it. */
    chain: () => card.locator('[data-field=chain] li').evaluateAll((es) => es.map((e) => e.getAttribute('data-channel'))),
    /** A chain entry's button: up, down or remove. */
    chainAction: (channel, action) => card.locator(`[data-field=chain] li[data-channel="${channel}"] [data-action=${action}]`),
    pick: (name, value) => pick(page, name, value),
    /** Save, and wait for the card to say it is saved. */
    save: async () => {
      await card.locator('[data-action=save]').click();
      await card.locator('[data-role=note][data-kind=ok]').waitFor();
    },
  };
}
