// Tests for the fake provider, over real HTTP on 127.0.0.1. Run: node --test e2e/fake-provider/
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startFakeProvider } from './fake-provider.mjs';

let fp;
before(async () => { fp = await startFakeProvider(); });
after(async () => { await fp.close(); });
beforeEach(() => fp.reset());

const chat = (model, { stream = true, signal, path = '/chat/completions' } = {}) =>
  fetch(fp.baseURL + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'hi' }] }),
    signal,
  });

/** Splits an SSE body into its `data:` payloads (JSON parsed, except the [DONE] sentinel). */
function sseData(text) {
  return text.split('\n\n').filter(Boolean).map((event) => {
    assert.match(event, /^data: /, `not an SSE data event: ${event}`);
    const data = event.slice('data: '.length);
    return data === '[DONE]' ? data : JSON.parse(data);
  });
}

async function waitFor(cond, ms = 1000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
  return true;
}

test('listens on 127.0.0.1 with an OS-picked port', () => {
  assert.ok(fp.port > 0);
  assert.equal(fp.baseURL, `http://127.0.0.1:${fp.port}/v1`);
});

test('per-model scripts, counters and request records', async () => {
  fp.script('mock-a', ['rate_limit']);
  fp.script('mock-b', ['success']);
  assert.equal((await chat('mock-a')).status, 429);
  assert.equal((await chat('mock-a')).status, 429);
  const b = await chat('mock-b');
  assert.equal(b.status, 200);
  await b.text();
  assert.deepEqual(fp.counts(), { 'mock-a': 2, 'mock-b': 1 });
  assert.deepEqual(fp.requests.map((r) => [r.model, r.step, r.closed]),
    [['mock-a', 'rate_limit', false], ['mock-a', 'rate_limit', false], ['mock-b', 'success', false]]);
  assert.equal(fp.requests[0].body.messages[0].content, 'hi');
  assert.equal(typeof fp.requests[0].at, 'number');
});

test('steps are consumed FIFO and the last one repeats', async () => {
  fp.script('m', ['server_error', { kind: 'rate_limit' }, 'success']);
  const statuses = [];
  for (let i = 0; i < 5; i++) {
    const r = await chat('m', { stream: false });
    await r.text();
    statuses.push(r.status);
  }
  assert.deepEqual(statuses, [500, 429, 200, 200, 200]);
});

test('repeatLast:false falls back to the * script, then to the default success', async () => {
  fp.script('m', ['rate_limit'], { repeatLast: false });
  fp.script('*', ['insufficient_balance'], { repeatLast: false });
  const statuses = [];
  for (let i = 0; i < 3; i++) {
    const r = await chat('m', { stream: false });
    await r.text();
    statuses.push(r.status);
  }
  assert.deepEqual(statuses, [429, 402, 200]);
  assert.deepEqual(fp.requests.map((r) => r.step), ['rate_limit', 'insufficient_balance', 'success']);
});

test('unscripted model uses the * script when set', async () => {
  fp.script('*', ['server_error']);
  assert.equal((await chat('anything')).status, 500);
});

test('unknown step kinds are rejected at script time', () => {
  assert.throws(() => fp.script('m', ['rate_limt']), /unknown step/);
});

test('success streams parseable SSE ending with [DONE]', async () => {
  const r = await chat('mock-x');
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /^text\/event-stream/);
  const events = sseData(await r.text());
  assert.equal(events.at(-1), '[DONE]');
  const [first, last] = events;
  assert.equal(first.object, 'chat.completion.chunk');
  assert.equal(first.model, 'mock-x');
  assert.equal(first.choices[0].delta.content, 'ok from mock-x');
  assert.equal(last.choices[0].finish_reason, 'stop');
  assert.ok(last.usage.total_tokens > 0);
  assert.equal(events.length, 3);
});

test('success with custom text, non-streaming JSON', async () => {
  fp.script('m', [{ kind: 'success', text: 'hello there' }]);
  const r = await chat('m', { stream: false });
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /^application\/json/);
  const json = await r.json();
  assert.equal(json.object, 'chat.completion');
  assert.deepEqual(json.choices[0].message, { role: 'assistant', content: 'hello there' });
  assert.equal(json.choices[0].finish_reason, 'stop');
});

test('/v1/chat/completions is accepted too', async () => {
  const r = await fetch(`http://127.0.0.1:${fp.port}/v1/chat/completions`, {
    method: 'POST', body: JSON.stringify({ model: 'm', stream: false }),
  });
  assert.equal(r.status, 200);
  assert.equal((await r.json()).choices[0].message.content, 'ok from m');
});

test('tool_call streams a function call and finish_reason tool_calls', async () => {
  fp.script('m', [{ kind: 'tool_call', name: 'read_file', arguments: { path: 'a.txt' }, id: 'call_1' }]);
  const events = sseData(await (await chat('m')).text());
  assert.equal(events.at(-1), '[DONE]');
  const call = events[0].choices[0].delta.tool_calls[0];
  assert.deepEqual(call, {
    index: 0, id: 'call_1', type: 'function',
    function: { name: 'read_file', arguments: '{"path":"a.txt"}' },
  });
  assert.equal(events[1].choices[0].finish_reason, 'tool_calls');
});

test('429 without Retry-After', async () => {
  fp.script('m', ['rate_limit']);
  const r = await chat('m');
  assert.equal(r.status, 429);
  assert.equal(r.headers.get('retry-after'), null);
  const json = await r.json();
  assert.equal(json.error.message, 'Rate limit reached for requests');
  assert.equal(typeof json.error.type, 'string');
});

test('429 with Retry-After (default 1, overridable, string accepted)', async () => {
  fp.script('m', ['rate_limit_retry_after', { kind: 'rate_limit_retry_after', retryAfter: 7 },
    { kind: 'status', status: 429, retryAfter: '3', message: 'slow down', code: 'x' }]);
  const a = await chat('m');
  assert.equal(a.headers.get('retry-after'), '1');
  await a.text();
  const b = await chat('m');
  assert.equal(b.headers.get('retry-after'), '7');
  await b.text();
  const c = await chat('m');
  assert.equal(c.status, 429);
  assert.equal(c.headers.get('retry-after'), '3');
  assert.deepEqual((await c.json()).error, { message: 'slow down', type: 'rate_limit_error', code: 'x' });
});

test('402 insufficient balance wording', async () => {
  fp.script('m', ['insufficient_balance']);
  const r = await chat('m');
  assert.equal(r.status, 402);
  assert.equal((await r.json()).error.message, 'Insufficient Balance');
});

test('500 server error and usage-cap messages', async () => {
  fp.script('m', ['server_error', 'usage_cap_en', 'usage_cap_zh']);
  const r = await chat('m');
  assert.equal(r.status, 500);
  assert.equal((await r.json()).error.message, 'Internal server error');
  const en = await chat('m');
  assert.equal(en.status, 429);
  assert.match((await en.json()).error.message, /^You have reached your usage limit for this billing period\. Your quota resets at /);
  const zh = await chat('m');
  assert.equal(zh.status, 429);
  assert.equal((await zh.json()).error.message, '已达到 Token Plan 用量上限，请稍后再试');
});

test('custom status step sends extra headers', async () => {
  fp.script('m', [{ kind: 'status', status: 503, headers: { 'x-fake': 'yes' } }]);
  const r = await chat('m');
  assert.equal(r.status, 503);
  assert.equal(r.headers.get('x-fake'), 'yes');
  assert.equal((await r.json()).error.message, 'Service Unavailable');
});

test('reset: the client sees a socket error', async () => {
  fp.script('m', ['reset']);
  await assert.rejects(chat('m'), (err) => {
    assert.equal(err.name, 'TypeError'); // fetch failed
    // ECONNRESET from the RST; UND_ERR_SOCKET ("other side closed") if only a FIN was sent.
    assert.ok(['ECONNRESET', 'UND_ERR_SOCKET'].includes(err.cause?.code), `cause: ${err.cause}`);
    return true;
  });
  assert.deepEqual(fp.counts(), { m: 1 });
  assert.equal(fp.requests[0].step, 'reset');
});

test('hang: a client abort is recorded as closed', async () => {
  fp.script('m', ['hang']);
  const started = Date.now();
  await assert.rejects(chat('m', { signal: AbortSignal.timeout(200) }), { name: 'TimeoutError' });
  assert.ok(Date.now() - started >= 190, 'the server must not have answered');
  assert.ok(await waitFor(() => fp.requests[0]?.closed === true), 'request not marked closed');
});

test('headers_then_hang: headers and the first chunk arrive, then nothing', async () => {
  fp.script('m', [{ kind: 'headers_then_hang', text: 'partial' }]);
  const ac = new AbortController();
  const r = await chat('m', { signal: ac.signal });
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /^text\/event-stream/);
  const reader = r.body.getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  assert.equal(sseData(first)[0].choices[0].delta.content, 'partial');
  const timeout = new Promise((res) => setTimeout(() => res('timeout'), 150));
  assert.equal(await Promise.race([reader.read().then(() => 'more'), timeout]), 'timeout');
  ac.abort();
  assert.ok(await waitFor(() => fp.requests[0]?.closed === true), 'request not marked closed');
});

test('slow_stream sends the configured number of chunks, spaced out', async () => {
  fp.script('m', [{ kind: 'slow_stream', chunks: 4, intervalMs: 30, text: 'abcdefgh' }]);
  const started = Date.now();
  const events = sseData(await (await chat('m')).text());
  assert.ok(Date.now() - started >= 85, 'chunks were not spaced out');
  const content = events.filter((e) => e !== '[DONE]' && e.choices[0].delta.content !== undefined);
  assert.equal(content.length, 4);
  assert.equal(content.map((e) => e.choices[0].delta.content).join(''), 'abcdefgh');
  assert.equal(events.at(-2).choices[0].finish_reason, 'stop');
  assert.equal(events.at(-1), '[DONE]');
});

test('firstTokenMs sends the headers and a keep-alive at once, the first chunk later', async () => {
  fp.script('m', [{ kind: 'success', firstTokenMs: 150, text: 'late' }]);
  const started = Date.now();
  const r = await chat('m');
  assert.equal(r.status, 200, 'the headers come first');
  const body = await r.text();
  assert.ok(Date.now() - started >= 140, 'the first chunk waited');
  assert.ok(body.startsWith(': keep-alive\n\n'));
  const events = sseData(body.slice(': keep-alive\n\n'.length));
  assert.equal(events[0].choices[0].delta.content, 'late');
  assert.equal(events.at(-1), '[DONE]');
});

test('delayMs delays the answer', async () => {
  fp.script('m', [{ kind: 'success', delayMs: 150 }]);
  const started = Date.now();
  const r = await chat('m', { stream: false });
  assert.equal(r.status, 200);
  assert.ok(Date.now() - started >= 140);
});

test('onRequest is called for each request', async () => {
  const seen = [];
  const p = await startFakeProvider({ onRequest: (r) => seen.push(r.model) });
  try {
    await (await fetch(p.baseURL + '/chat/completions', {
      method: 'POST', body: JSON.stringify({ model: 'z' }),
    })).text();
    assert.deepEqual(seen, ['z']);
  } finally {
    await p.close();
  }
});

test('close() ends hung requests and resolves promptly', async () => {
  const p = await startFakeProvider();
  p.script('m', ['hang']);
  const pending = fetch(p.baseURL + '/chat/completions', {
    method: 'POST', body: JSON.stringify({ model: 'm', stream: true }),
  });
  assert.ok(await waitFor(() => p.counts().m === 1), 'request never reached the server');
  const closed = p.close().then(() => 'closed');
  const timeout = new Promise((res) => setTimeout(() => res('timeout'), 1000).unref());
  assert.equal(await Promise.race([closed, timeout]), 'closed');
  await assert.rejects(pending);
});

test('404 on other paths and methods', async () => {
  const other = await fetch(`http://127.0.0.1:${fp.port}/v1/models`);
  assert.equal(other.status, 404);
  await other.text();
  const get = await fetch(`${fp.baseURL}/chat/completions`);
  assert.equal(get.status, 404);
  await get.text();
  const r = await chat('m', { path: '/completions' });
  assert.equal(r.status, 404);
  assert.ok((await r.json()).error.message);
  assert.deepEqual(fp.counts(), {});
});

test('reset() clears counters, requests and scripts', async () => {
  fp.script('m', ['server_error']);
  await (await chat('m')).text();
  fp.reset();
  assert.deepEqual(fp.counts(), {});
  assert.equal(fp.requests.length, 0);
  assert.equal((await chat('m', { stream: false })).status, 200);
});

test('CLI prints the URL, logs requests to stderr and the counts on SIGTERM', async () => {
  const file = fileURLToPath(new URL('./fake-provider.mjs', import.meta.url));
  const child = spawn(process.execPath, [file, '--port', '0', '--script',
    '{"mock-a":["rate_limit"],"mock-b":["success"]}'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { err += d; });
  const exited = new Promise((res) => child.on('exit', (code, signal) => res({ code, signal })));
  try {
    assert.ok(await waitFor(() => out.includes('\n'), 3000), `no URL line; stderr: ${err}`);
    const m = /^FAKE_PROVIDER_URL=(http:\/\/127\.0\.0\.1:\d+\/v1)\n$/.exec(out);
    assert.ok(m, `bad first line: ${out}`);
    const post = (model) => fetch(m[1] + '/chat/completions', {
      method: 'POST', body: JSON.stringify({ model }),
    });
    const a = await post('mock-a');
    assert.equal(a.status, 429);
    await a.text();
    await (await post('mock-b')).text();
    assert.ok(await waitFor(() => err.split('\n').length >= 3), 'no request log lines');
    const logged = err.trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(logged.map((l) => [l.model, l.step]), [['mock-a', 'rate_limit'], ['mock-b', 'success']]);
    child.kill('SIGTERM');
    assert.deepEqual(await exited, { code: 0, signal: null });
    assert.deepEqual(JSON.parse(out.split('\n')[1]), { 'mock-a': 1, 'mock-b': 1 });
  } finally {
    child.kill('SIGKILL');
  }
});

test('a prompt beyond a model\'s window is refused as a real provider refuses it, and its size recorded', async () => {
  fp.window('mock-a', 5);
  fp.script('mock-a', ['success']);
  const r = await chat('mock-a', { stream: false });
  assert.equal(r.status, 400);
  const body = await r.json();
  assert.match(body.error.message, /maximum context length is 5 tokens\. However, you requested \d+ tokens/);
  assert.equal(body.error.code, 'context_length_exceeded');
  assert.equal(fp.requests[0].step, 'context_window_exceeded');
  assert.ok(fp.requests[0].promptTokens > 5);
  fp.window('mock-a', 10_000); // it fits now: the script answers
  assert.equal((await chat('mock-a', { stream: false })).status, 200);
  assert.equal(fp.requests[1].step, 'success');
});
