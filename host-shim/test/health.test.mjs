import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HealthStore } from '../health.js';
import { compileModule, Engine as Policy } from '../engine.js';

const CHAIN = [{ provider: 'p', model: 'a' }, { provider: 'p', model: 'b' }];
const quiet = { warn() {} };
let compiled;
before(async () => { compiled = await compileModule(); });

function host(path, audit = [], options) {
  const policy = new Policy(compiled, { chain: CHAIN, probes: false, providerThreshold: 0 }, quiet);
  return { policy, audit, store: new HealthStore(path, policy, (r) => audit.push(r), options) };
}
const tmp = () => mkdtemp(join(tmpdir(), 'health-'));

const trip = (policy, now, channel = CHAIN[0], agent = 'x') => {
  policy.decide(now, { kind: 'request', agent, proposed: channel });
  policy.decide(now + 1, { kind: 'request-error', agent, provider: channel.provider, phase: 'before-host', rand: 0, failure: { code: 'QUOTA' } });
};
const routeOf = (policy, now) => policy.decide(now, { kind: 'request', agent: `q${now}`, proposed: CHAIN[0] }).verdict;
const record = (model, state, changedAtMs, extra = {}) => ({
  channel: { provider: 'p', model }, state, failures: 0, opens: state === 'open' ? 1 : 0,
  openUntilMs: state === 'open' ? changedAtMs + 600_000 : 0, lastCode: state === 'open' ? 'QUOTA' : '', changedAtMs, ...extra,
});
const saved = async (path) => JSON.parse(await readFile(path, 'utf8')).channels;

test('two hosts sharing one file see each other\'s trips after one refresh', async () => {
  const path = join(await tmp(), 'health.json');
  const one = host(path);
  const two = host(path);
  const now = Date.now();
  trip(one.policy, now);
  await one.store.save();

  assert.deepEqual(routeOf(two.policy, now + 10), { kind: 'pass' }, 'before the refresh, two does not know');
  await two.store.refresh();
  assert.deepEqual(routeOf(two.policy, now + 20), { kind: 'swap', provider: 'p', model: 'b' });
  assert.deepEqual(two.audit.map((a) => a.type), ['health-merged']);
});

test('a save merges what another host wrote first: nobody erases another\'s trip', async () => {
  const path = join(await tmp(), 'health.json');
  const one = host(path);
  const two = host(path);
  const now = Date.now();
  trip(one.policy, now);
  await one.store.save();
  trip(two.policy, now + 5, CHAIN[1], 'y');
  await two.store.save(); // without refreshing first

  assert.deepEqual((await saved(path)).map((c) => [c.channel.model, c.state]), [['a', 'open'], ['b', 'open']]);
});

test('saves at the same moment lose no trip: the read-merge-write holds a lock', async () => {
  const path = join(await tmp(), 'health.json');
  const now = Date.now();
  const hosts = Array.from({ length: 6 }, () => host(path));
  const models = hosts.map((_, i) => `m${i}`);
  hosts.forEach((h, i) => trip(h.policy, now + i, { provider: 'p', model: models[i] }, `a${i}`));
  for (let round = 0; round < 3; round++) await Promise.all(hosts.map((h) => h.store.save()));
  const channels = await saved(path);
  assert.deepEqual(channels.map((c) => c.channel.model).sort(), models, 'every host\'s trip is in the file');
  assert.ok(channels.every((c) => c.state === 'open'));
  assert.deepEqual((await readdir(join(path, '..'))).sort(), ['health.json'], 'no lock or temp file left');
});

test('files are the user\'s only: 0600 in a 0700 directory', async () => {
  const dir = join(await tmp(), 'state');
  const path = join(dir, 'health.json');
  const h = host(path);
  trip(h.policy, Date.now());
  await h.store.save();
  assert.equal((await stat(path)).mode & 0o777, 0o600);
  assert.equal((await stat(dir)).mode & 0o777, 0o700);
});

test('closed records older than the row\'s healthPruneMs (a day) are not taken, nor kept on write: the module\'s word', async () => {
  const dir = await tmp();
  const path = join(dir, 'health.json');
  const now = Date.now();
  const DAY = 86_400_000;
  await writeFile(path, JSON.stringify({ channels: [
    record('old-closed', 'closed', now - 3 * DAY),
    record('new-closed', 'closed', now - 1000),
    record('old-open', 'open', now - 3 * DAY, { openUntilMs: now + DAY }),
    // Closed long ago, but a burst in progress: kept (issue #17 item 7).
    record('old-closed-burst', 'closed', now - 3 * DAY, { failures: 2, lastCode: 'SERVER', lastFailureMs: now - 1000 }),
  ] }));
  const h = host(path, []);
  await h.store.refresh();
  assert.deepEqual(h.policy.snapshot().channels.map((c) => c.channel.model), ['new-closed', 'old-closed-burst', 'old-open'], 'not adopted');
  trip(h.policy, now);
  await h.store.save();
  assert.deepEqual((await saved(path)).map((c) => c.channel.model).sort(), ['a', 'new-closed', 'old-closed-burst', 'old-open']);

  // A record the module already holds ages out of the file too.
  const later = host(path, [], { now: () => now + 2 * DAY });
  await later.store.refresh();
  await later.store.save();
  assert.deepEqual((await saved(path)).map((c) => c.channel.model).sort(), ['a', 'old-open']);
});

test('one bad record costs only itself: it is skipped and audited, the rest taken', async () => {
  const path = join(await tmp(), 'health.json');
  const now = Date.now();
  await writeFile(path, JSON.stringify({ channels: [
    record('a', 'open', now),
    record('b', 'ajar', now),
    record('c', 'open', now, { lastCode: 'E'.repeat(10_000) }),
  ] }));
  const h = host(path);
  await h.store.refresh();
  assert.deepEqual(routeOf(h.policy, now + 10), { kind: 'swap', provider: 'p', model: 'b' }, 'the good trip is known');
  const skipped = h.audit.find((a) => a.type === 'health-skipped');
  assert.equal(skipped?.skipped, 2);
  assert.match(skipped.reasons[0], /channels\[1\]\.state/);
  assert.match(skipped.reasons[1], /channels\[2\]\.lastCode/);
  assert.ok(!h.audit.some((a) => a.type === 'health-set-aside'), 'the file is kept');
});

test('a corrupt file is set aside, audited, and rebuilt on the next save', async () => {
  const dir = await tmp();
  const path = join(dir, 'health.json');
  for (const [name, text] of [
    ['not JSON', '{"channels": [tru'],
    ['not a health batch', '{"channels": {}}'],
    ['nested 10^5 levels', '{"channels":' + '['.repeat(100_000) + ']'.repeat(100_000) + '}'],
  ]) {
    await writeFile(path, text);
    const h = host(path);
    await h.store.refresh();
    assert.equal(h.audit[0]?.type, 'health-set-aside', name);
    trip(h.policy, Date.now());
    await h.store.save();
    assert.equal((await saved(path))[0].state, 'open', `${name}: rebuilt`);
  }
  assert.equal((await readdir(dir)).filter((f) => f.includes('.corrupt-')).length, 3, 'the bad files kept for inspection');
});

test('a file beyond the size cap is set aside unread; set-aside files are few and bounded', async () => {
  const dir = await tmp();
  const path = join(dir, 'health.json');
  const maxBytes = 64 * 1024;
  const big = JSON.stringify({ channels: [record('a', 'open', Date.now(), { lastCode: 'X'.repeat(maxBytes) })] });
  for (let i = 0; i < 5; i++) {
    await writeFile(path, big);
    const h = host(path, [], { maxBytes });
    await h.store.refresh();
    assert.equal(h.audit[0]?.type, 'health-set-aside');
    assert.match(h.audit[0].reason, /more than the 65536 read/);
    assert.deepEqual(h.policy.snapshot().channels, [], 'nothing adopted');
    await new Promise((r) => setTimeout(r, 2)); // distinct set-aside times
  }
  const asides = (await readdir(dir)).filter((f) => f.includes('.corrupt-'));
  assert.equal(asides.length, 3, 'only the newest few are kept');
  for (const f of asides) assert.equal((await stat(join(dir, f))).size, maxBytes, 'each cut to the cap');
});

test('health.json a directory: the failure is audited once, and its end once', async () => {
  const dir = await tmp();
  const path = join(dir, 'health.json');
  await mkdir(path);
  const h = host(path);
  trip(h.policy, Date.now());
  for (let i = 0; i < 3; i++) {
    await h.store.refresh();
    await h.store.save();
  }
  // (state-*: the state directory's outage, said once for every store in it: store.js)
  assert.deepEqual(h.audit.map((a) => a.type), ['health-unavailable', 'state-unwritable']);
  assert.equal(h.audit[0].op, 'read');
  await rm(path, { recursive: true });
  await h.store.save();
  assert.deepEqual(h.audit.map((a) => a.type), ['health-unavailable', 'state-unwritable', 'state-writable', 'health-available']);
  assert.equal((await saved(path))[0].state, 'open');
});

test('writes are atomic: no temp files are left behind, even when a write fails', async () => {
  const dir = await tmp();
  const h = host(join(dir, 'health.json'));
  trip(h.policy, Date.now());
  await Promise.all([h.store.save(), h.store.save(), h.store.save()]);
  assert.deepEqual(await readdir(dir), ['health.json']);
});

test('a closed store reads and writes nothing: a refresh in flight finishes, later ones do not run', async () => {
  const dir = await tmp();
  const path = join(dir, 'health.json');
  const other = host(path);
  trip(other.policy, Date.now());
  await other.store.save();
  const h = host(path);
  const inFlight = h.store.refresh();
  await h.store.close();
  await inFlight;
  assert.deepEqual(h.audit.map((a) => a.type), ['health-merged'], 'the refresh in flight completed before close returned');
  const before = (await stat(path)).mtimeMs;
  trip(h.policy, Date.now(), CHAIN[1], 'late');
  await h.store.save();
  await h.store.refresh();
  assert.equal((await stat(path)).mtimeMs, before, 'nothing written after close');
  assert.deepEqual(await readdir(dir), ['health.json']);
});
