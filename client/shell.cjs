// @ts-check
// What the client needs from the web shell, reached lazily: a missing module
// or service then fails one render (contained to its slot), never the boot.
'use strict';

function react() {
  return require('react');
}

function primitives() {
  return require('@deepseek-ai/dsh-client-ui-primitives');
}

/** A service of the client app, or undefined (never injected: see entry.cjs). */
function service(ctx, name) {
  try {
    return ctx.get(name);
  } catch {
    return undefined;
  }
}

/** The shell's locale id, following switches; `<html lang>` when there is no locale service. */
function useLocale(ctx) {
  const React = react();
  const loc = service(ctx, 'locale');
  const subscribe = React.useCallback((fn) => {
    try {
      return loc && typeof loc.subscribe === 'function' ? loc.subscribe(fn) : () => {};
    } catch {
      return () => {};
    }
  }, [loc]);
  const read = () => {
    try {
      if (loc && typeof loc.getSnapshot === 'function') return String(loc.getSnapshot().active);
    } catch { /* fall through */ }
    return typeof document !== 'undefined' ? document.documentElement.lang || 'en' : 'en';
  };
  return React.useSyncExternalStore(subscribe, read, read);
}

/** One RPC call to the host half; `{ok:false, error}` instead of a throw. */
async function call(ctx, endpoint, payload, signal) {
  const connection = service(ctx, 'connection');
  if (!connection || !connection.rpc) return { ok: false, error: { code: 'NO_CONNECTION', message: 'no host connection' } };
  try {
    const r = await connection.rpc.call('/dsh-resilience', endpoint, payload, signal);
    // enabled: false (host-shim/off.js): sent as a success, because the
    // browser's caller throws on an error code the host does not list.
    if (r && r.ok && r.value && r.value.off === true) return { ok: false, error: { code: 'OFF', message: String(r.value.message || 'off') } };
    // A refusal travels as the host's bad-request with our reason as its issue
    // (host-shim/web.js refuse): callers see our reason as the code.
    const issue = r && !r.ok && r.error && r.error.details && Array.isArray(r.error.details.issues) ? r.error.details.issues[0] : undefined;
    if (issue && typeof issue.code === 'string') return { ok: false, error: { code: issue.code, message: String(r.error.message || issue.message || '') } };
    return r;
  } catch (e) {
    return { ok: false, error: { code: 'CALL_FAILED', message: String((e && e.message) || e) } };
  }
}

module.exports = { react, primitives, service, useLocale, call };
