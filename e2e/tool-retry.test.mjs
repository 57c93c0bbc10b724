// Tool-call retry in the real host: the fake provider answers with a call to a
// tool that a test plugin (e2e/fixtures/flaky-tools) registers beside
// dsh-resilience; the tool fails from a script and logs every call its body
// receives, and the model's next request (recorded by the fake provider) shows
// what the model was told.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, cleanStderr, makeHome, PRIMARY, ROOT, runHeadless, sessionEvents } from './harness.mjs';

const TOOL = 'flaky_lookup';
const QUERY = 'the-argument-value-7731'; // must never reach the audit log or an event
const ANSWER = 'the-tool-output-5529';
const FIXTURE = join(ROOT, 'e2e/fixtures/flaky-tools');
const NOTE = (n) => `[dsh-resilience] failed after ${n} attempts (last failure: socket); not retried further.`;

/** A home whose agent calls TOOL once, then answers "done". */
async function toolHome(fp, { tools, script, timeoutMs }) {
  fp.reset();
  fp.script(PRIMARY.model, [{ kind: 'tool_call', name: TOOL, arguments: { query: QUERY } }, { kind: 'success', text: 'done' }]);
  return makeHome({
    baseURL: fp.baseURL,
    plugin: { tools },
    extraPlugins: [{ dir: FIXTURE, id: 'flaky-tools', config: { tools: [{ name: TOOL, script, timeoutMs }] } }],
  });
}

const jsonl = async (path) => (await readFile(path, 'utf8').catch(() => '')).split('\n').filter(Boolean).map((l) => JSON.parse(l));
const bodyCalls = async (home) => (await jsonl(join(home.dsh, 'flaky-tools/calls.jsonl'))).filter((c) => c.at !== undefined);
const toolAudit = async (home) => (await auditRecords(home)).filter((a) => a.type.startsWith('tool-'));

/** The tool message the model's second request carried. */
function toolMessage(fp) {
  assert.ok(fp.requests.length >= 2, `the model was asked again: ${fp.requests.length} request(s)`);
  const msg = fp.requests[1].body.messages.find((m) => m.role === 'tool');
  assert.ok(msg, 'the second request carries a tool message');
  return msg.content;
}

describe('tool-call retry in the real host', () => {
  let fp;
  before(async () => { fp = await startFakeProvider({}); });
  after(() => fp.close());

  test('a declared tool failing with ECONNRESET twice is repeated, and the model gets the success', async (t) => {
    const home = await toolHome(fp, {
      tools: { retry: [TOOL], backoffMs: 100, maxBackoffMs: 400 },
      script: [{ kind: 'reset' }, { kind: 'reset' }, { kind: 'ok', answer: ANSWER }],
    });
    t.after(home.cleanup);

    const r = await runHeadless(home, 'Look it up');

    assert.equal(r.stdout.trim(), 'done', r.stderr);
    assert.equal(r.code, 0);
    assert.equal(cleanStderr(r.stderr), '');
    const calls = await bodyCalls(home);
    assert.deepEqual(calls.map((c) => c.call), [1, 2, 3], 'the tool body ran three times');
    assert.equal(new Set(calls.map((c) => c.callId)).size, 1, 'all three for the one call the model made');
    assert.equal(toolMessage(fp), `${TOOL} answered: ${ANSWER} (call 3)`);
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 2 });

    const audit = await toolAudit(home);
    assert.deepEqual(audit.map((a) => [a.type, a.attempt, a.reason]),
      [['tool-retry', 1, 'socket'], ['tool-retry', 2, 'socket'], ['tool-recovered', 3, undefined]]);
    // Equal jitter: the waits are in [ceiling/2, ceiling] of 100 and 200 ms,
    // and the body calls are at least that far apart.
    assert.ok(audit[0].delayMs >= 50 && audit[0].delayMs <= 100, `first wait ${audit[0].delayMs}`);
    assert.ok(audit[1].delayMs >= 100 && audit[1].delayMs <= 200, `second wait ${audit[1].delayMs}`);
    assert.ok(calls[1].at - calls[0].at >= audit[0].delayMs - 2 && calls[2].at - calls[1].at >= audit[1].delayMs - 2,
      `body calls at ${calls.map((c) => c.at - calls[0].at)} ms`);

    const events = await jsonl(join(home.dsh, 'flaky-tools/events.jsonl'));
    assert.deepEqual(events.map((e) => [e.tool, e.attempt, e.outcome, e.reason, e.delayMs]),
      audit.map((a) => [TOOL, a.attempt, { 'tool-retry': 'retry', 'tool-recovered': 'succeeded' }[a.type], a.reason, a.delayMs]),
      'another plugin heard dsh-resilience/tool-retry for each');
    const logged = JSON.stringify({ audit: await auditRecords(home), events });
    assert.ok(!logged.includes(QUERY) && !logged.includes(ANSWER) && !logged.includes('ECONNRESET'),
      'no argument values, no tool output, no failure text in the audit log or the events');
  });

  test('the same tool off the allow-list is called once, and the model gets the original failure', async (t) => {
    const home = await toolHome(fp, {
      tools: { retry: ['lookup', 'flaky_lookup_*', '.*'], backoffMs: 100, maxBackoffMs: 400 }, // `.*` is no wildcard
      script: [{ kind: 'reset' }, { kind: 'reset' }, { kind: 'ok', answer: ANSWER }],
    });
    t.after(home.cleanup);

    const r = await runHeadless(home, 'Look it up');

    assert.equal(r.stdout.trim(), 'done', r.stderr);
    assert.equal(r.code, 0);
    assert.equal((await bodyCalls(home)).length, 1);
    assert.equal(toolMessage(fp), 'Error: read ECONNRESET', 'the failure, untouched and without a note');
    assert.deepEqual(await toolAudit(home), []);
  });

  test('a declared tool that always fails is called exactly maxAttempts times; the model sees the note', async (t) => {
    const home = await toolHome(fp, {
      tools: { retry: [TOOL], backoffMs: 100, maxBackoffMs: 400, maxAttempts: 4 },
      script: [{ kind: 'reset' }],
    });
    t.after(home.cleanup);

    const r = await runHeadless(home, 'Look it up');

    assert.equal(r.stdout.trim(), 'done', r.stderr);
    assert.equal((await bodyCalls(home)).length, 4);
    assert.equal(toolMessage(fp), `Error: read ECONNRESET\n${NOTE(4)}`, 'the real failure, one line appended');
    const audit = await toolAudit(home);
    assert.deepEqual(audit.map((a) => [a.type, a.attempt]), [['tool-retry', 1], ['tool-retry', 2], ['tool-retry', 3], ['tool-exhausted', 4]]);
    const results = (await sessionEvents(home)).filter((e) => e.type === 'tool/result');
    assert.equal(results.length, 1);
    assert.equal(results[0].data.message.content[0].isError, true, 'still a failure');
  });

  test('an abort during the backoff starts no further call and returns the failure in hand', async (t) => {
    const home = await toolHome(fp, {
      tools: { retry: [TOOL], backoffMs: 20_000, maxBackoffMs: 20_000 }, // a wait of 10..20 s
      script: [{ kind: 'reset-and-cancel', afterMs: 500 }], // the user stops the turn half a second in
    });
    t.after(home.cleanup);

    const r = await runHeadless(home, 'Look it up');

    assert.notEqual(r.code, 0, 'a cancelled turn is not a completed one');
    const calls = await bodyCalls(home);
    assert.equal(calls.length, 1);
    const audit = await toolAudit(home);
    assert.deepEqual(audit.map((a) => [a.type, a.attempt]), [['tool-retry', 1]]);
    assert.ok(audit[0].delayMs >= 10_000, `the wait was ${audit[0].delayMs} ms`);
    const stop = (await auditRecords(home)).find((a) => a.type === 'stop');
    const waited = Date.parse(stop.at) - Date.parse(audit[0].at);
    // The wait did not run out: the stop came before its end (how soon is load, reported).
    assert.ok(waited < audit[0].delayMs, `the host stopped ${waited} ms into a ${audit[0].delayMs} ms wait`);
    t.diagnostic(`the host stopped ${waited} ms into a ${audit[0].delayMs} ms wait`);
    const results = (await sessionEvents(home)).filter((e) => e.type === 'tool/result');
    assert.deepEqual(results.map((e) => e.data.message.content[0].content[0].text), ['Error: read ECONNRESET']);
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 1 }, 'the turn ended: the model was not asked again');
  });

  test('a repeat, which skips the host\'s timeout policy, is stopped by its own deadline', async (t) => {
    const home = await toolHome(fp, {
      tools: { retry: [TOOL], backoffMs: 100, maxBackoffMs: 100, retryDeadlineMs: 500 },
      script: [{ kind: 'hang' }, { kind: 'hang' }, { kind: 'ok', answer: ANSWER }],
      timeoutMs: 8000, // the tool's own budget: the host's timeout policy holds the first attempt to it
    });
    t.after(home.cleanup);

    const r = await runHeadless(home, 'Look it up');

    assert.equal(r.stdout.trim(), 'done', r.stderr);
    const log = await jsonl(join(home.dsh, 'flaky-tools/calls.jsonl'));
    const ran = (n) => log.find((c) => c.call === n && c.aborted !== undefined).aborted - log.find((c) => c.call === n && c.at !== undefined).at;
    // Distinct budgets tell who stopped each attempt: the host's 8000 ms, then the repeat's
    // own 500 ms. The line between them is drawn halfway (4000 ms), so that neither a body
    // that logs its start late (shortening what it measures) nor a timer that fires late
    // under load moves an attempt to the wrong side.
    assert.ok(ran(1) >= 4000, `attempt 1 ran ${ran(1)} ms: the host's timeout policy`);
    assert.ok(ran(2) < 4000, `attempt 2 ran ${ran(2)} ms: the repeat's own deadline`);
    t.diagnostic(`attempt 1 ran ${ran(1)} ms (host budget 8000), attempt 2 ${ran(2)} ms (repeat deadline 500)`);
    assert.equal(toolMessage(fp), `${TOOL} answered: ${ANSWER} (call 3)`);
    assert.deepEqual((await toolAudit(home)).map((a) => [a.type, a.reason]),
      [['tool-retry', 'timeout'], ['tool-retry', 'timeout'], ['tool-recovered', undefined]]);
  });
});

describe('tool-retry config errors in the real host', () => {
  let fp;
  before(async () => { fp = await startFakeProvider({}); });
  after(() => fp.close());

  for (const [name, tools, message] of [
    ['an unknown key', { retrys: [TOOL] }, 'config key "tools.retrys": unknown key'],
    ['zero attempts', { retry: [TOOL], maxAttempts: 0 }, 'config key "tools.maxAttempts": must be between 1'],
    ['a regular expression', { retry: ['flaky_.*_x'] }, 'config key "tools.retry[0]"'],
    ['a bare star', { retry: ['*'] }, 'config key "tools.retry[0]": a bare * would repeat every tool'],
    ['a backoff cap below the base', { backoffMs: 1000, maxBackoffMs: 10 }, 'config key "tools.maxBackoffMs"'],
  ]) {
    test(`${name} stops activation with the key's name`, async (t) => {
      const home = await makeHome({ baseURL: fp.baseURL, plugin: { tools } });
      t.after(home.cleanup);
      const r = await runHeadless(home, 'Reply with OK');
      assert.notEqual(r.code, 0);
      assert.ok(r.stderr.includes(message), `stderr names the key: ${r.stderr.slice(0, 600)}`);
      // A policy key is the module's to check, and the module comes up behind
      // activation (start-up cost): a refused row ends the first turn, naming
      // the key, before any model request; nothing but the host's empty answer line is printed.
      assert.equal(r.stdout.trim(), '');
    });
  }
});
