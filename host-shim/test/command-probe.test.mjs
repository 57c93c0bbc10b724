import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderTable } from '../command.js';
import { parseCommandLine } from '../command-line.js';

const parseCommand = (line) => parseCommandLine('resilience', line);
import { runProbe } from '../probe.js';
import { appendRetry, appendRetryStarted, POLICY_KEY } from '../retry-events.js';

test('parseCommand', () => {
  assert.deepEqual(parseCommand(''), { kind: 'show' });
  assert.deepEqual(parseCommand('/resilience'), { kind: 'show' });
  assert.deepEqual(parseCommand(' backup  deepseek-official/deepseek-v4-pro '), { kind: 'backup', channel: { provider: 'deepseek-official', model: 'deepseek-v4-pro' } });
  assert.deepEqual(parseCommand('backup org/model/with/slashes'), { kind: 'backup', channel: { provider: 'org', model: 'model/with/slashes' } });
  assert.deepEqual(parseCommand('backup off'), { kind: 'backup' });
  for (const bad of ['backup', 'backup /m', 'backup p/', 'reset', 'backup a/b c']) assert.equal(parseCommand(bad).kind, 'error', bad);
});

test('renderTable lists every channel with its state and next probe', () => {
  const resolved = { chain: [{ provider: 'p', model: 'a' }, { provider: 'q', model: 'b' }], recovery: 'return', probes: true };
  const health = { channels: [
    { channel: { provider: 'p', model: 'a' }, state: 'open', failures: 2, opens: 3, openUntilMs: Date.UTC(2030, 0, 1, 12), lastCode: 'QUOTA' },
    { channel: { provider: 'q', model: 'b' }, state: 'closed', failures: 0, opens: 0, openUntilMs: 0, lastCode: '' },
  ] };
  const text = renderTable(resolved, health, { provider: 'q', model: 'b' }, Date.UTC(2030, 0, 1, 11));
  assert.match(text, /chain: p\/a → q\/b/);
  assert.match(text, /backup: q\/b/);
  assert.match(text, /p\/a\s+open\s+2\s+3\s+2030-01-01 12:00:00\s+QUOTA/);
  assert.match(text, /q\/b\s+closed\s+0\s+0\s+-\s+-/);
  assert.match(renderTable(resolved, health, undefined, Date.UTC(2030, 0, 1, 13)), /p\/a\s+open\s+2\s+3\s+due now/);
  assert.match(renderTable(resolved, { channels: [] }, undefined, 0), /All channels healthy/);
});

const channel = { provider: 'p', model: 'a' };
const llmAnswering = (chunks, capture = {}) => ({
  async *stream(options) {
    capture.options = options;
    for (const c of chunks) yield c;
  },
});

test('a probe that finishes cleanly is ok, with a tiny request', async () => {
  const capture = {};
  const out = await runProbe(llmAnswering([{ type: 'text-delta', index: 0, text: 'OK' }, { type: 'finish', reason: { kind: 'stop' } }], capture), channel, new AbortController().signal);
  assert.deepEqual(out, { kind: 'probe-result', channel, ok: true });
  assert.equal(capture.options.maxTokens, 8);
  assert.equal(capture.options.provider, 'p');
});

test('a probe asks for the row\'s probeMaxTokens', async () => {
  const capture = {};
  await runProbe(llmAnswering([{ type: 'finish', reason: { kind: 'stop' } }], capture), channel, new AbortController().signal, 256);
  assert.equal(capture.options.maxTokens, 256);
});

test('a probe that finishes with an error reports the host failure', async () => {
  const failure = { code: 'RATE_LIMIT', message: '429', status: 429, providerRetryAfterMs: 3000, requestId: 'r1' };
  const out = await runProbe(llmAnswering([{ type: 'finish', reason: { kind: 'error', failure } }]), channel, new AbortController().signal);
  assert.deepEqual(out.failure, { code: 'RATE_LIMIT', message: '429', status: 429, providerRetryAfterMs: 3000 });
});

test('a probe cancelled by dispose is ABORTED (says nothing of the channel)', async () => {
  const life = new AbortController();
  const llm = { async *stream({ signal }) { life.abort(); signal.throwIfAborted(); yield { type: 'finish', reason: { kind: 'stop' } }; } };
  const out = await runProbe(llm, channel, life.signal);
  assert.equal(out.failure.code, 'ABORTED');
});

test('llm/retry records use the plugin\'s own policy key and a stable retry id', () => {
  const appended = [];
  const payload = { agent: { id: 's1', session: { append: (type, data) => appended.push([type, data]) } }, turn: 2, step: 3, provider: 'p',
    failure: { code: 'QUOTA', message: 'spent', status: 402 } };
  const id = appendRetry(payload, { channel: { provider: 'q', model: 'b' }, attempt: 2 }, 1500, (f) => f); // the module's redaction: redaction.test.mjs
  appendRetryStarted(payload, id, 2);
  assert.equal(appended[0][0], 'llm/retry');
  assert.deepEqual(appended[0][1], { retryId: 'dsh-resilience:s1:2:3', turn: 2, step: 3, provider: 'q', mode: 'always', policyKey: POLICY_KEY,
    retry: 2, delayMs: 1500, failure: { code: 'QUOTA', message: 'spent', status: 402 } });
  assert.deepEqual(appended[1], ['llm/retry-started', { retryId: 'dsh-resilience:s1:2:3', turn: 2, step: 3, retry: 2 }]);
});
