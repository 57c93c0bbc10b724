// A scriptable fake OpenAI-compatible chat provider for the end-to-end tests.
//
// The real DSH host is pointed at this server so the tests can decide, per model id and per
// request, whether the "provider" succeeds, rate-limits, runs out of balance, resets the
// connection, hangs, and so on. Everything goes over real sockets on 127.0.0.1, because the
// resilience plugin under test reacts to transport-level failures (resets, hangs, half-sent
// streams) that an in-process mock could not reproduce.
//
// Zero dependencies: node: built-ins only, so it runs on the machine's Node 20 (unit tests)
// and on the Node 22 the host needs (e2e runs).

import http from 'node:http';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Fixed reset time in the English usage-cap message: a real provider names a concrete time,
// and a constant keeps the message byte-identical between runs.
const USAGE_CAP_EN =
  'You have reached your usage limit for this billing period. ' +
  'Your quota resets at 2030-01-01 00:00:00 UTC.';

// Named HTTP-error shorthands. Fields given on the step itself override these, so
// `{kind:'rate_limit', retryAfter: 3}` works as expected.
const STATUS_SHORTHANDS = {
  rate_limit: { status: 429, message: 'Rate limit reached for requests' },
  rate_limit_retry_after: { status: 429, message: 'Rate limit reached for requests', retryAfter: 1 },
  insufficient_balance: { status: 402, message: 'Insufficient Balance' },
  server_error: { status: 500, message: 'Internal server error' },
  usage_cap_en: { status: 429, message: USAGE_CAP_EN },
  usage_cap_zh: { status: 429, message: '已达到 Token Plan 用量上限，请稍后再试' },
};

// Default error `type`/`code` per status, shaped like what OpenAI / DeepSeek send, so clients
// that look at them see plausible values.
const ERROR_DEFAULTS = {
  400: { type: 'invalid_request_error', code: 'invalid_request_error' },
  402: { type: 'unknown_error', code: 'invalid_request_error' },
  404: { type: 'invalid_request_error', code: 'not_found' },
  429: { type: 'rate_limit_error', code: 'rate_limit_exceeded' },
  500: { type: 'server_error', code: 'internal_error' },
};

const BASE_KINDS = new Set([
  'success', 'tool_call', 'status', 'reset', 'hang', 'headers_then_hang', 'slow_stream',
]);
const KINDS = new Set([...BASE_KINDS, ...Object.keys(STATUS_SHORTHANDS)]);

/** Accepts `'rate_limit'` or `{kind:'rate_limit', ...}`; throws early on typos. */
function normalizeStep(step) {
  const s = typeof step === 'string' ? { kind: step } : { ...step };
  if (!s || typeof s.kind !== 'string' || !KINDS.has(s.kind)) {
    throw new TypeError(`fake-provider: unknown step ${JSON.stringify(step)}`);
  }
  return s;
}

function chunkEvent(id, model, created, choice, extra = {}) {
  return {
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, ...choice }],
    ...extra,
  };
}

function usageFor(text) {
  const completion = Math.max(1, Math.ceil(String(text).length / 4));
  return { prompt_tokens: 10, completion_tokens: completion, total_tokens: 10 + completion };
}

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
};

// The prompt's size in tokens, priced as the host's own token meter prices
// text (four characters a token): what a test compares with a window.
export function promptTokens(body) {
  const { messages, tools, system } = body ?? {};
  return Math.ceil(JSON.stringify({ messages, tools, system }).length / 4);
}

// What a real OpenAI-compatible provider answers a prompt its window cannot
// hold: a 400 whose wording the host's adapters read as CONTEXT_WINDOW_EXCEEDED.
const overflow = (window, tokens) => ({
  status: 400,
  message: `This model's maximum context length is ${window} tokens. However, you requested ${tokens} tokens. Please reduce the length of the messages.`,
  type: 'invalid_request_error',
  code: 'context_length_exceeded',
});

export async function startFakeProvider(options = {}) {
  const { onRequest, port = 0 } = options;
  const windows = new Map(Object.entries(options.windows ?? {})); // model -> its real context window
  const scripts = new Map(); // model -> { steps: normalized[], repeatLast }
  const countsByModel = {};
  const requests = [];
  const sockets = new Set();
  let shuttingDown = false;
  let seq = 0;

  function script(model, steps, { repeatLast = true } = {}) {
    const list = (Array.isArray(steps) ? steps : [steps]).map(normalizeStep);
    scripts.set(model, { steps: list, repeatLast });
  }

  // FIFO; the last step is kept forever when repeatLast. An exhausted (or missing) script
  // falls through to '*' and then to the default success.
  function nextStep(model) {
    for (const key of [model, '*']) {
      const entry = scripts.get(key);
      if (!entry || entry.steps.length === 0) continue;
      if (entry.steps.length === 1 && entry.repeatLast) return entry.steps[0];
      return entry.steps.shift();
    }
    return { kind: 'success' };
  }

  for (const [model, steps] of Object.entries(options.scripts ?? {})) script(model, steps);

  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'POST' || (path !== '/chat/completions' && path !== '/v1/chat/completions')) {
      req.resume();
      sendError(res, { status: 404, message: `fake-provider: no route ${req.method} ${path}` });
      return;
    }
    const parts = [];
    req.on('data', (c) => parts.push(c));
    req.on('end', () => {
      let body;
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8'));
      } catch {
        sendError(res, { status: 400, message: 'fake-provider: request body is not JSON' });
        return;
      }
      handle(req, res, body ?? {});
    });
  });

  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  function handle(req, res, body) {
    const model = typeof body.model === 'string' ? body.model : '(none)';
    const tokens = promptTokens(body);
    // A prompt beyond the model's real window is refused before any script step is taken.
    const tooLong = windows.has(model) && tokens > windows.get(model);
    const step = tooLong ? { kind: 'status', ...overflow(windows.get(model), tokens) } : nextStep(model);
    const record = { model, step: tooLong ? 'context_window_exceeded' : step.kind, at: Date.now(), body, closed: false, promptTokens: tokens };
    countsByModel[model] = (countsByModel[model] ?? 0) + 1;
    requests.push(record);

    // Timers of this request: cleared when the connection goes away so that neither a
    // delayed answer nor a slow stream writes to a dead socket or keeps the process alive.
    const timers = new Set();
    const later = (ms, fn) => {
      const t = setTimeout(() => { timers.delete(t); fn(); }, ms);
      timers.add(t);
    };
    let serverAborted = false; // set when *we* cut the connection (reset / close())
    res.on('close', () => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      // 'close' also fires after a normal finish; only an unfinished response means the
      // peer went away early.
      if (!res.writableFinished && !serverAborted && !shuttingDown) record.closed = true;
    });

    if (onRequest) {
      try { onRequest(record); } catch { /* a logging callback must not break the server */ }
    }

    const ctx = { req, res, body, model, step, later, id: `chatcmpl-fake-${++seq}`, seq };
    const run = () => {
      if (step.kind === 'reset') {
        serverAborted = true;
        // resetAndDestroy sends a TCP RST (ECONNRESET on the client), the closest match
        // to a provider/proxy dropping the connection; older Nodes fall back to a FIN.
        if (typeof req.socket.resetAndDestroy === 'function') req.socket.resetAndDestroy();
        else req.socket.destroy();
        return;
      }
      respond(ctx);
    };
    if (step.delayMs > 0) later(step.delayMs, run);
    else run();
  }

  function respond({ req, res, body, model, step, later, id, seq }) {
    const stream = body.stream === true;
    const created = Math.floor(Date.now() / 1000);
    const text = step.text ?? `ok from ${model}`;
    const sse = (obj) => res.write(`data: ${typeof obj === 'string' ? obj : JSON.stringify(obj)}\n\n`);

    if (STATUS_SHORTHANDS[step.kind] || step.kind === 'status') {
      const error = { ...STATUS_SHORTHANDS[step.kind], ...step };
      // A provider that quotes the request's credentials back in its error body.
      if (step.echoAuth) error.message = `${error.message ?? ''} (request had Authorization: ${req.headers.authorization ?? '(none)'})`;
      sendError(res, error);
      return;
    }

    switch (step.kind) {
      case 'success':
        if (!stream) {
          sendJSON(res, 200, {
            id, object: 'chat.completion', created, model,
            choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
            usage: usageFor(text),
          });
          return;
        }
        res.writeHead(200, SSE_HEADERS);
        if (step.firstTokenMs > 0) {
          // A provider that accepted the call and is slow to its first token: the
          // headers and a keep-alive comment now (as DeepSeek does while it queues),
          // the answer after firstTokenMs.
          res.write(': keep-alive\n\n');
          later(step.firstTokenMs, () => respond({ res, body, model, step: { kind: 'success_body', text }, later, id, seq }));
          return;
        }
        sse(chunkEvent(id, model, created, { delta: { role: 'assistant', content: text }, finish_reason: null }));
        sse(chunkEvent(id, model, created, { delta: {}, finish_reason: 'stop' }, { usage: usageFor(text) }));
        sse('[DONE]');
        res.end();
        return;

      case 'success_body': // the rest of a success whose headers went out already (firstTokenMs)
        sse(chunkEvent(id, model, created, { delta: { role: 'assistant', content: text }, finish_reason: null }));
        sse(chunkEvent(id, model, created, { delta: {}, finish_reason: 'stop' }, { usage: usageFor(text) }));
        sse('[DONE]');
        res.end();
        return;

      case 'tool_call': {
        const call = {
          id: step.id ?? `call_fake_${seq}`,
          type: 'function',
          function: { name: step.name, arguments: JSON.stringify(step.arguments ?? {}) },
        };
        const usage = usageFor(call.function.arguments);
        if (!stream) {
          sendJSON(res, 200, {
            id, object: 'chat.completion', created, model,
            choices: [{
              index: 0,
              message: { role: 'assistant', content: null, tool_calls: [call] },
              finish_reason: 'tool_calls',
            }],
            usage,
          });
          return;
        }
        res.writeHead(200, SSE_HEADERS);
        sse(chunkEvent(id, model, created, {
          delta: { role: 'assistant', content: null, tool_calls: [{ index: 0, ...call }] },
          finish_reason: null,
        }));
        sse(chunkEvent(id, model, created, { delta: {}, finish_reason: 'tool_calls' }, { usage }));
        sse('[DONE]');
        res.end();
        return;
      }

      case 'hang':
        return; // no headers, no body: the socket stays open until the client or close() ends it

      case 'headers_then_hang':
        if (stream) {
          res.writeHead(200, SSE_HEADERS);
          sse(chunkEvent(id, model, created, { delta: { role: 'assistant', content: text }, finish_reason: null }));
        } else {
          // Non-streaming analogue: headers plus a truncated JSON body.
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write(`{"id":"${id}","object":"chat.completion",`);
        }
        return;

      case 'slow_stream': {
        const n = Math.max(1, step.chunks ?? 3);
        const interval = step.intervalMs ?? 50;
        // Split the text into n pieces so the streamed content still concatenates to `text`.
        const pieces = Array.from({ length: n }, (_, i) =>
          text.slice(Math.floor((i * text.length) / n), Math.floor(((i + 1) * text.length) / n)));
        if (!stream) {
          later(n * interval, () => respond({ res, body, model, step: { kind: 'success', text }, later, id, seq }));
          return;
        }
        res.writeHead(200, SSE_HEADERS);
        let i = 0;
        const tick = () => {
          sse(chunkEvent(id, model, created, {
            delta: i === 0 ? { role: 'assistant', content: pieces[i] } : { content: pieces[i] },
            finish_reason: null,
          }));
          i += 1;
          if (i < n) { later(interval, tick); return; }
          sse(chunkEvent(id, model, created, { delta: {}, finish_reason: 'stop' }, { usage: usageFor(text) }));
          sse('[DONE]');
          res.end();
        };
        tick();
        return;
      }

      default: // unreachable: normalizeStep rejects unknown kinds; answer rather than throw in a socket handler
        sendError(res, { status: 500, message: `fake-provider: unhandled kind ${step.kind}` });
    }
  }

  function sendJSON(res, status, obj, headers = {}) {
    const payload = JSON.stringify(obj);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(payload),
      ...headers,
    });
    res.end(payload);
  }

  function sendError(res, { status = 500, message, type, code, retryAfter, headers = {} }) {
    const defaults = ERROR_DEFAULTS[status] ?? { type: 'api_error', code: null };
    const extra = { ...headers };
    if (retryAfter !== undefined && retryAfter !== null) extra['retry-after'] = String(retryAfter);
    sendJSON(res, status, {
      error: {
        message: message ?? http.STATUS_CODES[status] ?? 'error',
        type: type ?? defaults.type,
        code: code ?? defaults.code,
      },
    }, extra);
  }

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => { server.off('error', reject); resolve(); });
  });
  const actualPort = server.address().port;

  return {
    baseURL: `http://127.0.0.1:${actualPort}/v1`,
    port: actualPort,
    script,
    /** Sets a model's real context window (undefined: none); a longer prompt gets the overflow 400. */
    window(model, tokens) {
      if (tokens === undefined) windows.delete(model);
      else windows.set(model, tokens);
    },
    counts: () => ({ ...countsByModel }),
    get requests() { return requests; },
    reset() {
      scripts.clear();
      windows.clear();
      requests.length = 0;
      for (const k of Object.keys(countsByModel)) delete countsByModel[k];
    },
    close() {
      shuttingDown = true;
      return new Promise((resolve) => {
        server.close(() => resolve()); // resolves even if already closed (callback gets an error)
        // Hung and keep-alive sockets would otherwise hold server.close() (and the process) open.
        for (const s of sockets) s.destroy();
      });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// CLI: node fake-provider.mjs [--port N] [--script '{"model":["step", ...]}']

function isMain() {
  if (!process.argv[1]) return false;
  try {
    return realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

function parseArgs(argv) {
  const out = { port: 0, scripts: {} };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s);
    const value = () => inline ?? argv[++i];
    if (flag === '--port') out.port = Number(value());
    else if (flag === '--script') out.scripts = JSON.parse(value());
    else throw new Error(`fake-provider: unknown argument ${argv[i]}`);
  }
  return out;
}

if (isMain()) {
  const args = parseArgs(process.argv.slice(2));
  const provider = await startFakeProvider({
    port: args.port,
    scripts: args.scripts,
    // The body can be large (system prompt, tool schemas); log a summary, not the whole thing.
    onRequest: (r) => process.stderr.write(JSON.stringify({
      model: r.model, step: r.step, at: r.at,
      stream: r.body?.stream === true, messages: r.body?.messages?.length ?? 0,
    }) + '\n'),
  });
  process.stdout.write(`FAKE_PROVIDER_URL=${provider.baseURL}\n`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    const counts = provider.counts();
    await provider.close();
    process.stdout.write(JSON.stringify(counts) + '\n', () => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
