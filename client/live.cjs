// @ts-check
// The host's status, live: one long poll per session view (web.js `status`
// answers when something changed, or after 20 s), never more often than once
// a second even when the host answers at once or fails.
'use strict';

const { react, call, service } = require('./shell.cjs');

const MIN_GAP_MS = 1000;

/**
 * @import { ClientContext } from './shell.cjs'
 * @import { StatusAnswer } from '../host-shim/web-rpc.js'
 */

/**
 * The latest status answer, when it came, and the last call's error code.
 * @typedef {object} LiveStatus
 * @property {StatusAnswer | undefined} status
 * @property {number} receivedAt - browser ms
 * @property {string | undefined} error
 */

/**
 * `{status, receivedAt, error}`; status undefined until the first answer.
 * @param {ClientContext} ctx
 * @param {string | undefined} session
 * @returns {LiveStatus}
 */
function useLiveStatus(ctx, session) {
  const React = react();
  const [view, setView] = React.useState(/** @type {LiveStatus} */ ({ status: undefined, receivedAt: 0, error: undefined }));
  React.useEffect(() => {
    const stop = new AbortController();
    /** @type {number | undefined} */
    let since;
    (async () => {
      while (!stop.signal.aborted) {
        const started = Date.now();
        if (!service(ctx, 'connection')) {
          setView((v) => ({ ...v, error: 'NO_CONNECTION' }));
        } else {
          const r = await call(ctx, 'status', { since, session }, stop.signal);
          if (stop.signal.aborted) return;
          if (r && r.ok) {
            since = r.value.revision;
            setView({ status: r.value, receivedAt: Date.now(), error: undefined });
          } else {
            const code = (r && r.error && r.error.code) || 'NO_STATUS';
            setView((v) => ({ ...v, error: code }));
            if (code === 'OFF') return; // enabled: false in the row: nothing will change until the host restarts
          }
        }
        const gap = MIN_GAP_MS - (Date.now() - started);
        if (gap > 0) await new Promise((res) => setTimeout(res, gap));
      }
    })().catch(() => {});
    return () => stop.abort();
  }, [ctx, session]);
  return view;
}

/**
 * Re-renders once a second while `active` (the countdowns).
 * @param {boolean} active
 */
function useTick(active) {
  const React = react();
  const [, setN] = React.useState(0);
  React.useEffect(() => {
    if (!active) return undefined;
    const id = setInterval(() => setN((n) => n + 1), 1000);
    return () => clearInterval(id);
  }, [active]);
}

module.exports = { useLiveStatus, useTick };
