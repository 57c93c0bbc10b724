// What each replaced plugin's keys become. One entry per plugin: the row
// ids and module names it is found by, and per documented key a function
// (value, its row's config) -> {to, value, note} (or a list of them). `to`
// is our key path; no `to` means no equivalent, and the note says what the
// user gets instead. The defaults of the old plugins are not restated: only
// what a row says is carried over (the docs/migrating pages list them).

import { parseChannel } from './channel.js';

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
/** A `!!js` scalar (the host evaluates it at activation): carried over as written. */
const isExpr = (v) => isObject(v) && typeof v.__jsExpr === 'string';

/** A whole number of at least min; `floor` only where the old plugin itself floored it. */
function int(v, min = 0, floor = false) {
  if (isExpr(v)) return v;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min) throw new Error(`must be a number of at least ${min}, not ${JSON.stringify(v)}`);
  if (!floor && !Number.isInteger(v)) throw new Error(`must be a whole number, not ${v}`);
  return Math.floor(v);
}
function bool(v) {
  if (isExpr(v) || typeof v === 'boolean') return v;
  throw new Error(`must be true or false, not ${JSON.stringify(v)}`);
}
function nonEmpty(v, what) {
  if (typeof v !== 'string' || v.trim() === '') throw new Error(`${what} must be a non-empty string`);
  return v;
}

/** `[{provider, model}]`, or "provider/model" strings. */
function channels(v, extra = []) {
  if (!Array.isArray(v)) throw new Error('must be a list of {provider, model}');
  return v.map((c, i) => {
    if (typeof c === 'string') {
      const channel = parseChannel(c);
      if (!channel) throw new Error(`[${i}]: "${c}" is not provider/model`);
      return channel;
    }
    if (!isObject(c)) throw new Error(`[${i}] must be {provider, model}`);
    for (const k of Object.keys(c)) {
      if (!['provider', 'model', ...extra].includes(k)) throw new Error(`[${i}].${k}: no equivalent (a channel is a provider and a model)`);
    }
    const out = { provider: nonEmpty(c.provider, `[${i}].provider`), model: nonEmpty(c.model, `[${i}].model`) };
    if (c.reasoningEffort !== undefined && extra.includes('reasoningEffort')) out.reasoningEffort = nonEmpty(c.reasoningEffort, `[${i}].reasoningEffort`);
    return out;
  });
}

const none = (note) => () => ({ note });

const daruma = {
  plugin: 'dsh-daruma',
  names: ['dsh-daruma'],
  ids: ['dsh-daruma', 'daruma'],
  keys: {
    channels: (v) => ({ to: 'chain', value: channels(v), note: 'same order; the first is the primary' }),
    failureBudget: (v) => ({ to: 'failureThreshold', value: int(v, 1),
      note: 'counts every failure on a channel within burstWindowMs, the host\'s own retries included (daruma counted the rounds dsh-llm-retry gave up on)' }),
    cooldownMs: (v) => ({ to: 'cooldownMs', value: int(v), note: 'doubles while the outage lasts, up to maxCooldownMs; a provider\'s Retry-After extends it' }),
    giveUpBudget: (v) => ({ to: 'maxFailovers', value: int(v), note: 'failovers without a success in between; giveUpAfterMs (15 min) bounds one agent\'s recovery too' }),
    stateFile: none('no equivalent: channel health lives in <stateDir>/health.json ($DSH_HOME/dsh-resilience; set stateDir to move it); daruma\'s file is not read'),
    logFile: none('no equivalent: failovers and give-ups go to <stateDir>/audit.jsonl and to the session as llm/retry rows'),
  },
};

const reconnect = {
  plugin: 'dsh-reconnect',
  names: ['dsh-reconnect'],
  ids: ['dsh-reconnect', 'reconnect'],
  // Its whole point: a turn with nowhere else to go is never given up on.
  always: () => [{ to: 'persistent', value: true,
    note: 'its row: a failure with nowhere else to go is retried on its channel (1 s doubling to backoffMaxMs, 60 s unless set) until the turn is cancelled' }],
  keys: {
    maxDelayMs: (v) => ({ to: 'backoffMaxMs', value: int(v, 1), note: 'cap of the same-channel backoff; a provider\'s Retry-After is honoured above it, as in reconnect' }),
    retryQuota: (v) => (bool(v) === true
      ? { to: 'quota.defaultEnabled', value: true,
        note: 'the quota rules on: a spent allowance with nowhere to go is retried with no attempt limit, once per quota.longTermDelayMs (an hour, not every maxDelayMs)' }
      : { note: 'the default: a spent allowance fails over, or with nowhere to go is handed back (persistent waits out outages, not spent allowances)' }),
    retryUnknown: (v) => (bool(v) === true
      ? { note: 'the same with persistent: an unknown failure counts as transient and, with nowhere to go, is retried until the turn is cancelled' }
      : { note: 'no switch: an unknown failure counts as transient (classes can hand a known code back: {code, class: permanent})' }),
    unknownMaxRetries: (v) => (int(v), { note: 'no equivalent: unknown failures count towards failureThreshold like transient ones, and persistent retries them without a count' }),
  },
};

const BALANCE_KEYS = ['provider', 'script', 'timeoutMs', 'refreshMs', 'apiKeyEnv', 'env', 'minimumRemaining', 'unit'];

/** A script given as one line becomes argv when it is plain words; anything a shell would interpret is refused. */
function argv(script, at) {
  if (Array.isArray(script)) return script;
  if (typeof script === 'string' && /^[\w./@:=+,-]+( +[\w./@:=+,-]+)*$/.test(script.trim())) return script.trim().split(/ +/);
  throw new Error(`${at}.script: give it as argv, [program, args...]: a shell line is not run`);
}

function balances(v) {
  const list = Array.isArray(v) ? v : isObject(v) ? Object.entries(v).map(([provider, b]) => ({ provider, ...b })) : undefined;
  if (!list) throw new Error('must be a list of balance scripts, or a map of provider to script');
  return list.map((b, i) => {
    if (!isObject(b)) throw new Error(`[${i}] must be an object`);
    for (const k of Object.keys(b)) if (!BALANCE_KEYS.includes(k)) throw new Error(`[${i}].${k}: no equivalent (known: ${BALANCE_KEYS.join(', ')})`);
    return { ...b, script: argv(b.script, `[${i}]`) };
  });
}

/** Pools as the quota plugin has them, a map of name to routes, become our named list. */
function pools(v) {
  if (Array.isArray(v)) return v; // already our shape
  if (!isObject(v)) throw new Error('must be a map of pool name to routes');
  return Object.entries(v).map(([name, p]) => {
    const routes = Array.isArray(p) ? p : isObject(p) && Array.isArray(p.routes) ? p.routes : undefined;
    if (!routes) throw new Error(`${name}: must be a list of routes`);
    try {
      return { name, routes: channels(routes, ['reasoningEffort']) };
    } catch (e) {
      throw new Error(`${name}${e.message}`);
    }
  });
}

const quotaRetry = {
  plugin: 'dsh-llm-quota-retry',
  names: ['dsh-llm-quota-retry'],
  ids: ['llm-quota-retry', 'quota-retry', 'dsh-llm-quota-retry'],
  always: () => [{ to: 'quota', value: {}, note: 'its row turns the quota rules on (quota.active)' }],
  keys: {
    pools: (v) => ({ to: 'pools', value: pools(v), note: 'a list of {name, routes}; the same names, routes and order' }),
    balances: (v) => ({ to: 'quota.balances', value: balances(v), note: 'one script per provider, argv, the same reading {remaining, resetsAt?}' }),
    longTermDelayMs: (v) => ({ to: 'quota.longTermDelayMs', value: int(v, 1), note: 'delay between attempts of a long-term wait' }),
    defaultEnabled: (v) => ({ to: 'quota.defaultEnabled', value: bool(v), note: 'the per-session switch until a session sets it' }),
    failOpen: (v) => ({ to: 'quota.failOpen', value: bool(v), note: 'a route nothing reported on is usable' }),
    exhaustedCooldownMs: (v) => ({ to: 'quota.exhaustedCooldownMs', value: int(v, 1), note: 'an exhaustion mark\'s lifetime' }),
  },
};

const toolRetry = {
  plugin: 'dsh-plugin-tool-retry',
  names: ['dsh-plugin-tool-retry'],
  ids: ['tool-retry', 'dsh-plugin-tool-retry'],
  keys: {
    retryTools: (v) => {
      if (!Array.isArray(v) || v.some((p) => typeof p !== 'string')) throw new Error('must be a list of tool names');
      if (v.includes('*')) throw new Error('"*" would repeat every tool, writes included: name the tools that are safe to run twice');
      return { to: 'tools.retry', value: v, note: 'names, or a prefix ending in *' };
    },
    maxAttempts: (v) => ({ to: 'tools.maxAttempts', value: Math.max(1, int(v, 0, true)), note: 'attempts per call, the first included' }),
    backoffMs: (v) => {
      const n = int(v);
      return { to: 'tools.backoffMs', value: Math.max(1, n), note: n === 0 ? 'at least 1 ms here' : 'first wait\'s ceiling (full jitter), doubling' };
    },
    maxBackoffMs: (v) => ({ to: 'tools.maxBackoffMs', value: Math.max(1, int(v)), note: 'cap of the doubling' }),
    retryDeadlineMs: (v) => {
      const n = int(v);
      return n === 0
        ? { to: 'tools.retryDeadlineMs', value: 86_400_000, note: '0 (no deadline) is refused here: a day, the longest, bounds a repeat that hangs' }
        : { to: 'tools.retryDeadlineMs', value: n, note: 'bounds each repeated attempt' };
    },
  },
};

/** dsh-model-failover's default trip codes: what a circuit counted unless told otherwise. */
const TRIP_CODES = ['RATE_LIMIT', 'SERVER', 'TIMEOUT', 'TRANSPORT', 'QUOTA', 'EMPTY_RESPONSE'];

function tripCodes(v) {
  if (!Array.isArray(v) || v.some((c) => typeof c !== 'string' || c.trim() === '')) throw new Error('must be a list of codes');
  const codes = [...new Set(v.map((c) => c.trim().toUpperCase()))];
  const classes = [
    ...codes.filter((c) => !TRIP_CODES.includes(c)).map((code) => ({ code, class: 'transient' })),
    ...TRIP_CODES.filter((c) => !codes.includes(c)).map((code) => ({ code, class: 'permanent' })),
  ];
  if (classes.length === 0) return { note: 'the default list: these codes already count (transient, or quota for QUOTA)' };
  return { to: 'classes', value: classes, note: 'added codes count as transient; dropped ones are handed back to the host uncounted (permanent)' };
}

const modelFailover = {
  plugin: 'dsh-model-failover',
  names: ['dsh-model-failover'],
  ids: ['model-failover', 'dsh-model-failover'],
  keys: {
    enabled: (v) => (bool(v) === false
      ? { to: 'enabled', value: false, note: 'the master switch: off observes nothing and changes nothing' }
      : { note: 'the default: the plugin acts while its row is enabled' }),
    fallbacks: (v) => ({ to: 'chain', value: channels(v), note: 'the session\'s own model is still tried first, then the chain in this order' }),
    tripCodes: (v) => tripCodes(v),
    modelCircuitThreshold: (v) => ({ to: 'failureThreshold', value: int(v, 1),
      note: 'counts every failure on the channel within burstWindowMs, the host\'s retries included (model-failover counted those llm-retry gave up on)' }),
    burstWindowMs: (v) => ({ to: 'burstWindowMs', value: int(v, 1), note: 'same meaning' }),
    modelCooldownMs: (v) => ({ to: 'cooldownMs', value: int(v), note: 'doubles while the outage lasts, up to maxCooldownMs; Retry-After extends it' }),
    platformCircuitThreshold: (v) => ({ to: 'providerThreshold', value: int(v), note: 'distinct open models that open their provider' }),
    platformCooldownMs: (v) => ({ to: 'providerCooldownMs', value: int(v), note: 'how long an opened provider stays open (0: as long as its longest open model)' }),
    enableProbe: (v) => ({ to: 'probes', value: bool(v), note: 'an opened channel gets one tiny real request when its open time is up' }),
    probeMaxTokens: (v) => ({ to: 'probeMaxTokens', value: int(v, 1), note: 'output tokens a probe asks for (1-4096)' }),
    stripReasoningEffort: (v, config) => (bool(v) === true && Array.isArray(config.fallbacks) && config.fallbacks.length > 0
      ? { to: 'stripReasoningEffort', value: channels(config.fallbacks), note: 'every fallback: a failover to it never sends a reasoning effort' }
      : { note: 'the default: a failover keeps the reasoning effort where the target lists it and drops it where not' }),
    notifyUser: (v) => (bool(v), { note: 'no switch: every switch is an llm/retry row in the session (shown in the web client) and an audit line' }),
  },
};

/** Our own row: its keys carry over unchanged, nested objects key by key so a clash is seen. */
const NESTED = ['tools', 'stall', 'slow', 'quota', 'shared'];
const own = {
  plugin: 'dsh-resilience',
  names: ['dsh-resilience'],
  ids: ['resilience'],
  keys: new Proxy({}, {
    get: (_t, key) => (typeof key !== 'string' ? undefined : (v) => (NESTED.includes(key) && isObject(v) && !isExpr(v)
      ? (Object.keys(v).length === 0 ? [{ to: key, value: {}, note: 'already ours' }]
        : Object.entries(v).map(([k, x]) => ({ to: `${key}.${k}`, value: x, note: 'already ours' })))
      : { to: key, value: v, note: 'already ours' })),
  }),
};

export const PLUGINS = [daruma, reconnect, quotaRetry, toolRetry, modelFailover, own];
