// Driving the stock web UI the way a user does: the first-visit notice, the
// workspace picker, the composer, the sidebar, Settings → Plugins. Only the
// plugin's own elements are found by their data-testid hooks.
export const CHIP = '[data-testid=dsh-resilience-chip]';
export const ROW = '[data-testid=dsh-resilience-row]';
export const DOCK = '[data-testid=dsh-resilience-dock]';
export const CARD = '[data-testid=dsh-resilience-settings]';

/** The stock controls by their English or Chinese names (the host's locale decides). */
const NAME = {
  continue: /^(Continue|继续)$/,
  choose: /^(Choose workspace|选择工作区)$/,
  open: /^(Open|打开)$/,
  send: /^(Send message|发送消息)$/,
  settings: /^(Settings|设置)$/,
  plugins: /^(Plugins|插件)$/,
};

/**
 * Past the first-visit notice (shown once per home) into a workspace: the
 * browse picker's Open takes $HOME. A home that has one already skips it.
 */
export async function enterWorkspace(page, { choose: pick = true } = {}) {
  const cont = page.getByRole('button', { name: NAME.continue });
  const choose = page.getByRole('button', { name: NAME.choose });
  const session = page.locator('[data-composer-card]');
  // Whichever the page shows first: the notice (first visit), the picker, or a composer.
  await cont.or(choose).or(session).first().waitFor({ timeout: 30_000 });
  if (await cont.waitFor({ timeout: 3000 }).then(() => true, () => false)) {
    await cont.click();
    await cont.waitFor({ state: 'hidden' });
  }
  if (pick && await choose.waitFor({ timeout: 3000 }).then(() => true, () => false)) {
    await choose.click();
    await page.getByRole('button', { name: NAME.open }).click();
  }
}

/** Types a message into the composer and sends it. */
export async function send(page, text) {
  const box = page.locator('[data-composer-card] textarea').first();
  await box.click();
  await box.fill(text);
  await page.getByRole('button', { name: NAME.send }).click();
}

/** Reopens a session from the sidebar by its title (the URL stays `/`). */
export async function openSession(page, title) {
  await page.getByRole('button', { name: title, exact: true }).or(page.getByText(title, { exact: true })).first().click();
}

/** Settings → Plugins (its first tab, Plugin configuration, holds the card), the card expanded. */
export async function openPluginSettings(page) {
  await page.getByRole('button', { name: NAME.settings }).click();
  await page.getByRole('button', { name: NAME.plugins }).click();
  await page.locator(CARD).waitFor({ timeout: 15_000 });
  const header = page.locator(`${CARD} [data-role=card-header]`);
  if ((await header.getAttribute('aria-expanded')) !== 'true') await header.click();
  await page.locator(`${CARD} .dshr-body`).waitFor();
}

/** Picks `value` in one of the card's pickers (the host's Menu, not a native select). */
export async function pick(page, field, value) {
  await page.locator(`${CARD} [data-field=${field}]`).click();
  await page.locator(`[role=menu] [data-dshr-option="${value}"]`).click();
}

/**
 * The elements of ours (and the host's menu items holding ours) whose content
 * is wider than their box: what a user sees clipped. [] when nothing is.
 */
export async function overflowing(page) {
  return page.evaluate(() => {
    const roots = [...document.querySelectorAll('[data-testid^=dsh-resilience], .dshr-card')];
    const els = new Set();
    for (const r of roots) {
      els.add(r);
      for (const e of r.querySelectorAll('*')) els.add(e);
      const item = r.closest('[role=menuitem]');
      if (item) { els.add(item); for (const e of item.querySelectorAll('*')) els.add(e); }
    }
    const out = [];
    for (const e of els) {
      if (!(e instanceof HTMLElement) || e.clientWidth === 0) continue;
      if (e.scrollWidth > e.clientWidth + 1) out.push(`${e.tagName.toLowerCase()}.${e.className} "${e.textContent.slice(0, 40)}" ${e.scrollWidth}>${e.clientWidth}`);
    }
    return out;
  });
}

/** Polls `f` until it returns a truthy value (the UI updates asynchronously). The bound only
 * stops a hung test: at load 20-40 a host and Chromium took far longer than when it was 20 s. */
export async function until(f, what, timeoutMs = 90_000) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    last = await f();
    if (last) return last;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
}
