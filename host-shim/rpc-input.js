// What the web RPC accepts, checked where it enters (web.js): every field
// bounded and well-formed before anything is looked up or written, and a
// reply never echoes more than a short excerpt of what was sent. Without it
// a made-up 1 MB session id was stored (~1 MB in quota-sessions.json and in
// the audit log per call) and a 10 MB value came back as a 10 MB error.
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** The host's session ids are `session-<uuid>` or `session-<n>`: 128 is ample. */
export const MAX_SESSION_ID = 128;
/** A quota switch word or a pool name. */
export const MAX_VALUE = 100;
/** `provider/model`, each part a host id. */
export const MAX_CHANNEL = 300;
/** The settings card's section, as JSON. */
export const MAX_SECTION_BYTES = 64 * 1024;
/** How much of a refused input a reply shows. */
const EXCERPT = 40;

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;

/**
 * A short, printable excerpt of any input, for an error message.
 * @param {unknown} v
 */
export function excerpt(v) {
  /** @type {string} */
  let s;
  try {
    s = typeof v === 'string' ? v : JSON.stringify(v) ?? String(v);
  } catch {
    s = Object.prototype.toString.call(v);
  }
  s = s.slice(0, EXCERPT + 1).replace(/[\u0000-\u001f\u007f]/g, '?');
  return s.length > EXCERPT ? `"${s.slice(0, EXCERPT)}…"` : `"${s}"`;
}

/**
 * An own, enumerable property of a plain body: `__proto__` or an inherited key is not one.
 * @param {unknown} payload
 * @param {string} key
 * @returns {unknown}
 */
export const field = (payload, key) => (payload !== null && typeof payload === 'object' && Object.hasOwn(payload, key) ? /** @type {Record<string, unknown>} */ (payload)[key] : undefined);

/**
 * Why v is not a session id, or undefined.
 * @param {unknown} v
 */
export function sessionIdProblem(v) {
  if (typeof v !== 'string' || v === '') return 'no session';
  if (v.length > MAX_SESSION_ID) return `session id longer than ${MAX_SESSION_ID} characters`;
  if (!SESSION_ID.test(v)) return `session id ${excerpt(v)} is not letters, digits and . _ : -`;
  return undefined;
}

/**
 * Whether the host's agent id and a browser's session id name the same
 * session: the agent id may carry a `session-` prefix.
 * @param {string} agent
 * @param {string | undefined} session
 */
export const sameSession = (agent, session) => !!session && (agent === session || agent === `session-${session}` || `session-${agent}` === session);

/**
 * The forms a browser's session id may take on the host (with or without `session-`).
 * @param {string} id
 */
export const sessionForms = (id) => [...new Set([id, `session-${id}`, id.replace(/^session-/, '')])].filter(Boolean);

/**
 * Whether the host knows the session: live in its session store, or logged
 * under its sessions directory (`<dir>/<workspace>/<session id>/`), which is
 * where a session the browser shows but has not yet run lives.
 * @param {string} id
 * @param {{sessions?: {get(id: string): unknown}, sessionsDir?: string}} host
 */
export async function hostKnowsSession(id, { sessions, sessionsDir }) {
  if (sessionIdProblem(id)) return false; // never a path outside the sessions directory
  const forms = sessionForms(id);
  try {
    if (sessions && forms.some((f) => sessions.get(f) !== undefined)) return true;
  } catch { /* a store that throws knows nothing */ }
  if (!sessionsDir) return false;
  const workspaces = await readdir(sessionsDir).catch(() => []);
  for (const w of workspaces.slice(0, 1000)) {
    for (const f of forms) {
      if (await stat(join(sessionsDir, w, f)).then((s) => s.isDirectory(), () => false)) return true;
    }
  }
  return false;
}

/**
 * How deeply a body may nest. The deepest a page sends is the settings
 * card's section (`section.chain[i].provider`, four levels); the module's
 * codec refuses deeper than 32 too (plugin/codec/depth.go).
 */
export const MAX_BODY_DEPTH = 32;
/** How large a body may be, counted as its JSON text would be (about): the section's bound and ample room. */
export const MAX_BODY_BYTES = 4 * MAX_SECTION_BYTES;

/**
 * A field's path for a message, e.g. `section.chain[0][0]`, cut short.
 * @param {Array<string | number>} path
 */
function pathText(path) {
  const s = path.map((k, i) => (typeof k === 'number' ? `[${k}]` : /^[A-Za-z_$][\w$]*$/.test(k) ? `${i ? '.' : ''}${k}` : `[${excerpt(k)}]`)).join('');
  return s.length > 80 ? `${s.slice(0, 80)}…` : s || 'the body';
}

/**
 * Why an RPC body (or the settings card's section) is too deep or too large
 * to be looked at, naming the field; undefined when it is neither. Walked
 * iteratively and stopped at the first bound, so no input can exhaust the
 * stack here: JSON.stringify and every check after it recurse per level,
 * and a 50,000-deep `chain` once came back as `Maximum call stack size
 * exceeded`. A body that cannot be walked (a getter that throws) is refused too.
 * @param {unknown} body
 * @param {{maxDepth?: number, maxBytes?: number, root?: string[]}} [o] - root: the path the body sits at, for the message.
 * @returns {string | undefined}
 */
export function bodyProblem(body, { maxDepth = MAX_BODY_DEPTH, maxBytes = MAX_BODY_BYTES, root = [] } = {}) {
  /** @type {Array<{v: unknown, path: Array<string | number>}>} */
  const stack = [{ v: body, path: root }];
  let bytes = 0;
  try {
    while (stack.length > 0) {
      const { v, path } = /** @type {{v: unknown, path: Array<string | number>}} */ (stack.pop());
      bytes += typeof v === 'string' ? v.length + 2 : 8; // a string's text, a scalar's, or a bracket and comma
      if (bytes > maxBytes) return `${pathText(path)}: the body is larger than ${maxBytes} bytes`;
      if (v === null || typeof v !== 'object') continue;
      if (path.length - root.length >= maxDepth) return `${pathText(path)}: nests deeper than ${maxDepth} levels`;
      if (Array.isArray(v)) {
        bytes += v.length; // a comma each, counted before a million of them are walked
        if (bytes > maxBytes) return `${pathText(path)}: the body is larger than ${maxBytes} bytes`;
        for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: [...path, i] });
      } else {
        for (const k of Object.keys(v)) {
          bytes += k.length + 3;
          if (bytes > maxBytes) return `${pathText([...path, k])}: the body is larger than ${maxBytes} bytes`;
          stack.push({ v: /** @type {Record<string, unknown>} */ (v)[k], path: [...path, k] });
        }
      }
    }
  } catch {
    return `${pathText(root)}: cannot be read as JSON`;
  }
  return undefined;
}
