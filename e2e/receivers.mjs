// Receivers the observability tests run on 127.0.0.1: an OTLP/HTTP logs
// receiver (what the host's OTel backend exports to) and a webhook receiver
// (what `notify` posts to), each keeping what it got for the test to read.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { gunzipSync } from 'node:zlib';

/** A value of OTLP/JSON's AnyValue, as plain JS. */
function anyValue(v) {
  if (v === undefined || v === null) return undefined;
  if ('stringValue' in v) return v.stringValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return v.doubleValue;
  if ('boolValue' in v) return v.boolValue;
  if ('arrayValue' in v) return (v.arrayValue.values ?? []).map(anyValue);
  if ('kvlistValue' in v) return Object.fromEntries((v.kvlistValue.values ?? []).map((kv) => [kv.key, anyValue(kv.value)]));
  return undefined;
}

/**
 * An OTLP/HTTP logs receiver: POST /v1/logs with a JSON body (what the
 * host's exporter, @opentelemetry/exporter-logs-otlp-http, sends), gzipped
 * as the host's row configures. Every log record is kept, flattened.
 */
export async function startReceiver() {
  const records = [];
  const raw = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/logs') {
        res.writeHead(404).end();
        return;
      }
      let buf = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') buf = gunzipSync(buf);
      const text = buf.toString('utf8');
      raw.push({ contentType: req.headers['content-type'], text });
      const body = JSON.parse(text);
      for (const rl of body.resourceLogs ?? []) {
        for (const sl of rl.scopeLogs ?? []) {
          for (const lr of sl.logRecords ?? []) {
            records.push({
              scope: sl.scope?.name,
              severityText: lr.severityText,
              severityNumber: lr.severityNumber,
              attributes: Object.fromEntries((lr.attributes ?? []).map((kv) => [kv.key, anyValue(kv.value)])),
              body: anyValue(lr.body),
              text: JSON.stringify(lr),
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}/v1/logs`, records, raw, close: () => new Promise((r) => server.close(r)) };
}

/** The records of ours among all the host exported. */
export const ours = (records) => records.filter((r) => String(r.attributes['telemetry.op'] ?? '').startsWith('dsh-resilience.'));

/**
 * A webhook receiver on 127.0.0.1: `answer` 'ok' takes each POST (204), 'hang'
 * reads it and never answers (until close()); a list of statuses answers the
 * n-th POST with its n-th (the last for every one after).
 */
export async function startHook(answer = 'ok') {
  const got = [];
  const open = new Set();
  const statusOf = (n) => (Array.isArray(answer) ? answer[Math.min(n, answer.length) - 1] : answer === 'ok' ? 204 : undefined);
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const status = statusOf(got.length + 1);
      got.push({ headers: req.headers, raw, body: JSON.parse(raw), answered: status !== undefined, status });
      if (status !== undefined) res.writeHead(status).end();
      else open.add(res);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}/hooks/resilience?token=t-9921`,
    got,
    pending: () => open.size,
    close: () => { for (const res of open) res.destroy(); server.closeAllConnections?.(); return new Promise((r) => server.close(r)); },
  };
}

/** A port nothing listens on: a receiver that refuses every connection. */
export async function refusedURL() {
  const s = createServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const port = s.address().port;
  await new Promise((r) => s.close(r));
  return `http://127.0.0.1:${port}/hook`;
}

/**
 * Whether a hit carries, under `secret`, the HMAC of its time, its delivery id
 * and its exact bytes (docs/telemetry.md), signed within five minutes.
 */
export const verifyWith = (secret, hit) => {
  const id = String(hit.headers['x-dsh-resilience-delivery'] ?? '');
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(hit.headers['x-dsh-resilience-signature'] ?? ''));
  if (!id || !m) return false;
  const want = createHmac('sha256', secret).update(`${m[1]}.${id}.${hit.raw}`).digest();
  return timingSafeEqual(Buffer.from(m[2], 'hex'), want) && Math.abs(Date.now() / 1000 - Number(m[1])) <= 300;
};

export async function until(check, what, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

