// @ts-check
// What the client needs from the web shell, reached lazily: a missing module
// or service then fails one render (contained to its slot), never the boot.
'use strict';

/**
 * @import { FunctionComponent } from 'react'
 * @import { Endpoints } from '../host-shim/web-rpc.js'
 * @import { AnyDefinition } from './definitions.cjs'
 * @import { SettingsScopeBinder } from './settings-card.cjs'
 */

/**
 * The shell's locale service; each part may be missing on an older shell.
 * @typedef {object} LocaleService
 * @property {(listener: () => void) => () => void} [subscribe]
 * @property {() => {active: unknown}} [getSnapshot]
 */

/**
 * An error as the host's RPC carries it (its RpcError): the host's own, or a
 * refusal of ours as its one issue (web-rpc.d.ts Refusal, web.js refuse).
 * @typedef {{code: string, message: string, details?: {issues?: Array<{code?: unknown, message?: unknown}>}}} RpcError
 */

/**
 * The host RPC's answer as the connection hands it over (its RpcResult):
 * `value` is the endpoint's (web-rpc.d.ts Endpoints), or host-shim/off.js's
 * `{off: true, message}` when the plugin is off.
 * @typedef {{ok: true, value: unknown} | {ok: false, error: RpcError}} RpcResult
 */

/**
 * The host connection service (dsh-client-connection): the RPC is all the client uses.
 * @typedef {object} Connection
 * @property {{call(channel: string, endpoint: string, payload: unknown, signal?: AbortSignal): Promise<RpcResult>}} [rpc]
 */

/**
 * The client app's services the client reaches with `ctx.get`.
 * @typedef {object} Services
 * @property {LocaleService} locale
 * @property {Connection} connection
 * @property {SettingsScopeBinder} settingsScope
 */

/**
 * The client app's context (the host's cordis Context) as far as the client
 * uses it: the host publishes no declarations for it to plugins. `get` may
 * throw for a service that is not there.
 * @typedef {object} ClientContext
 * @property {<K extends keyof Services>(name: K) => Services[K] | undefined} get
 * @property {{inject(name: string, f: () => void): void, register(spec: object, component: FunctionComponent<never>): void}} slots
 * @property {(deps: ['conversationEvents'], f: (sub: {conversationEvents: {register(def: AnyDefinition): void}}) => void) => void} inject
 */

/**
 * An endpoint's answer as call() hands it on: the value, or our reason.
 * @template T
 * @typedef {{ok: true, value: T} | {ok: false, error: {code: string, message: string}}} Result
 */

function react() {
  return require('react');
}

function primitives() {
  return require('@deepseek-ai/dsh-client-ui-primitives');
}

/**
 * A service of the client app, or undefined (never injected: see entry.cjs).
 * @template {keyof Services} K
 * @param {ClientContext} ctx
 * @param {K} name
 * @returns {Services[K] | undefined}
 */
function service(ctx, name) {
  try {
    return ctx.get(name);
  } catch {
    return undefined;
  }
}

/**
 * The shell's locale id, following switches; `<html lang>` when there is no locale service.
 * @param {ClientContext} ctx
 * @returns {string}
 */
function useLocale(ctx) {
  const React = react();
  const loc = service(ctx, 'locale');
  const subscribe = React.useCallback(/** @param {() => void} fn */ (fn) => {
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

/**
 * One RPC call to the host half; `{ok:false, error}` instead of a throw.
 * @template {keyof Endpoints} E
 * @param {ClientContext} ctx
 * @param {E} endpoint
 * @param {Endpoints[E]['payload']} payload
 * @param {AbortSignal} [signal]
 * @returns {Promise<Result<Endpoints[E]['answer']>>}
 */
async function call(ctx, endpoint, payload, signal) {
  const connection = service(ctx, 'connection');
  if (!connection || !connection.rpc) return { ok: false, error: { code: 'NO_CONNECTION', message: 'no host connection' } };
  try {
    const r = await connection.rpc.call('/dsh-resilience', endpoint, payload, signal);
    // enabled: false (host-shim/off.js): sent as a success, because the
    // browser's caller throws on an error code the host does not list.
    const off = r && r.ok ? /** @type {{off?: unknown, message?: unknown} | null | undefined} */ (r.value) : undefined;
    if (off && off.off === true) return { ok: false, error: { code: 'OFF', message: String(off.message || 'off') } };
    // A refusal travels as the host's bad-request with our reason as its issue
    // (host-shim/web.js refuse): callers see our reason as the code.
    const error = r && !r.ok ? r.error : undefined;
    const issue = error && error.details && Array.isArray(error.details.issues) ? error.details.issues[0] : undefined;
    if (error && issue && typeof issue.code === 'string') return { ok: false, error: { code: issue.code, message: String(error.message || issue.message || '') } };
    // Otherwise the endpoint's own answer: the host half sends each endpoint's shape (Endpoints).
    return /** @type {Result<Endpoints[E]['answer']>} */ (r);
  } catch (e) {
    return { ok: false, error: { code: 'CALL_FAILED', message: String((e && e.message) || e) } };
  }
}

module.exports = { react, primitives, service, useLocale, call };
