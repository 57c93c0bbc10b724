// @ts-check
// The settings card (Settings → Plugins, keyed `dsh-resilience`): the live
// tunables through the host's settings scope, the backup through the same
// write path as the chip and `/resilience backup`. A draft is checked by the
// module (the host's `validate`) before anything is written, so an invalid
// value is refused with the module's own message and nothing changes.
// It looks like the stock plugin cards (collapsible, the message under the
// field it is about, actions in the footer), built from the host's primitives
// (Button, Input, Menu, the chevron icon); style.cjs has the layout.
'use strict';

const { react, primitives, useLocale, call } = require('./shell.cjs');
const { translate } = require('./i18n.cjs');
const { localizeProblem } = require('./problem.cjs');
const { ensureStyle } = require('./style.cjs');
const { useMenuKeys, fromKeyboard } = require('./keys.cjs');

/**
 * @import { ReactNode } from 'react'
 * @import { Channel } from '../host-shim/policy-types.js'
 * @import { ClientContext } from './shell.cjs'
 * @import { Translate } from './i18n.cjs'
 */

/**
 * The card's part of the settings section (policy/card.go CardKeys): as the
 * host holds it, or as the card sends it to be checked, where a number that
 * does not parse is still text for the module to name.
 * @typedef {object} Section
 * @property {number | string | null} [failureThreshold]
 * @property {number | string | null} [cooldownMs]
 * @property {number | string | null} [backoffMaxMs]
 * @property {string | null} [recovery]
 * @property {boolean | null} [persistent]
 * @property {boolean | null} [retryUnknown]
 * @property {number | string | null} [unknownMaxRetries]
 * @property {Channel[] | null} [chain]
 * @property {{defaultEnabled?: boolean} | null} [quota] - only defaultEnabled: the host merges it into the row's quota object
 */

/**
 * The card's fields as edited: numbers as typed, channels as "provider/model".
 * @typedef {object} Draft
 * @property {string} failureThreshold
 * @property {string} cooldownMs
 * @property {string} backoffMaxMs - '' leaves it unset (the module's default)
 * @property {string} recovery
 * @property {boolean} persistent
 * @property {boolean} retryUnknown
 * @property {string} unknownMaxRetries
 * @property {string[]} chain
 * @property {boolean} quota - Retry on quota: quota.defaultEnabled
 */

/** @typedef {'failureThreshold' | 'cooldownMs' | 'backoffMaxMs' | 'unknownMaxRetries'} NumberField */
/** @typedef {keyof Draft} Field */

/**
 * The host's settings scope snapshot (dsh-client-runtime SettingsScopeSnapshot), as the card reads it.
 * @typedef {object} SettingsSnapshot
 * @property {'loading' | 'ready' | 'unavailable'} status
 * @property {Section | undefined} value - the section the host resolved
 * @property {Section | undefined} [base] - the layer under the user's: what a field reverts to once cleared
 * @property {unknown} [user] - the user's own layer: a key there is overridden
 */

/**
 * The host's settings scope of one namespace (dsh-client-runtime SettingsScope).
 * @typedef {object} SettingsScope
 * @property {() => SettingsSnapshot} getSnapshot
 * @property {(listener: () => void) => () => void} subscribe
 * @property {(field: string, value: unknown) => Promise<void>} set
 * @property {(field: string) => Promise<void>} unset
 */

/** @typedef {{bind(spec: {namespace: string}): SettingsScope}} SettingsScopeBinder */

/**
 * A message on the card: under the field it names, else in the footer.
 * @typedef {{kind: 'info' | 'ok' | 'error', text: string, field?: string}} Note
 */

/**
 * @typedef {object} PickerProps
 * @property {string} id
 * @property {string} field - its `data-field`
 * @property {string} label
 * @property {string} value - the chosen option's id
 * @property {string} [placeholder] - shown while no option is chosen
 * @property {Array<{id: string, label: string}>} options
 * @property {(id: string) => void} onChange
 */

/** @type {NumberField[]} */
const NUMBERS = ['failureThreshold', 'cooldownMs', 'backoffMaxMs', 'unknownMaxRetries'];
/** @type {Field[]} */
const FIELDS = [...NUMBERS, 'recovery', 'persistent', 'retryUnknown', 'chain', 'quota'];
/** dsh-reconnect's presets for the longest single wait (backoffMaxMs), in ms. */
const WAIT_PRESETS = [1000, 2000, 5000, 10000, 30000, 60000, 120000];
const CUSTOM = 'custom';
// The wait left unset: the module picks 30 s, or 60 s with persistent. The card
// must not write the 30 s itself, or switching persistent on here would keep
// a 30 s cap the user never chose (dsh-reconnect users expect 60 s).
const DEFAULT = 'default';
/** The module's caps for an unset backoffMaxMs (policy/config.go), shown in the option's label only. */
const DEFAULT_WAIT_MS = { plain: 30000, persistent: 60000 };

/**
 * The preset a draft's wait is (its ms as text), DEFAULT when unset, or CUSTOM.
 * @param {string | undefined} text
 */
function waitChoice(text) {
  const v = String(text ?? '').trim();
  if (v === '') return DEFAULT;
  return WAIT_PRESETS.map(String).includes(v) ? v : CUSTOM;
}

/**
 * @param {unknown} a
 * @param {unknown} b
 */
const sameJson = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/**
 * @param {Section | undefined} value
 * @returns {Draft}
 */
function draftOf(value) {
  const v = value || {};
  return {
    failureThreshold: String(v.failureThreshold ?? ''),
    cooldownMs: String(v.cooldownMs ?? ''),
    backoffMaxMs: String(v.backoffMaxMs ?? ''),
    recovery: v.recovery || 'return',
    persistent: v.persistent === true,
    retryUnknown: v.retryUnknown !== false, // on unless the section says off: the module's default
    unknownMaxRetries: String(v.unknownMaxRetries ?? ''),
    chain: Array.isArray(v.chain) ? v.chain.map((c) => `${c.provider}/${c.model}`) : [],
    // Off when the section has no quota: the host's base has one only where the row's quota rules apply.
    quota: !!(v.quota && v.quota.defaultEnabled === true),
  };
}

/**
 * Whether a section says Retry on quota: the host's schema makes an absent
 * quota `{}`, which says nothing (the row has no quota rules).
 * @param {Section | undefined} v
 */
const hasQuota = (v) => !!(v && v.quota && typeof v.quota.defaultEnabled === 'boolean');

/**
 * The draft as a settings section; numbers that do not parse go through as text for the module to name.
 * @param {Draft} draft
 * @param {Section} [base] - the host's base layer: a row without quota rules has no quota there
 */
function sectionOf(draft, base) {
  /** @type {Section} */
  const out = {};
  for (const k of NUMBERS) out[k] = /^\s*-?\d+\s*$/.test(draft[k]) ? Number(draft[k]) : draft[k];
  if (String(draft.backoffMaxMs ?? '').trim() === '') delete out.backoffMaxMs; // unset: the module's default for the mode
  if (String(draft.unknownMaxRetries ?? '').trim() === '') delete out.unknownMaxRetries; // unset: the module's 3
  out.recovery = draft.recovery;
  out.persistent = draft.persistent === true;
  out.retryUnknown = draft.retryUnknown !== false;
  out.chain = draft.chain.map((c) => ({ provider: c.split('/')[0], model: c.slice(c.indexOf('/') + 1) }));
  // The one key: the row's other quota keys stay the row's. Off over a base
  // with no quota (a row without quota rules) is the row as it is: no quota
  // object written, which would turn the rules on.
  if (draft.quota || hasQuota(base)) out.quota = { defaultEnabled: draft.quota === true };
  return out;
}

/**
 * A field the module's refusal names (`config key "cooldownMs": ...`), if it is one of the card's.
 * @param {unknown} problem
 */
function fieldOf(problem) {
  const m = /config key "(\w+)"/.exec(String(problem || ''));
  return m && /** @type {readonly string[]} */ (FIELDS).includes(m[1]) ? m[1] : undefined;
}

/**
 * A choice among a few values: the host's Button opening the host's Menu (no native select).
 * @param {PickerProps} props
 */
function Picker(props) {
  const React = react();
  const h = React.createElement;
  const P = primitives();
  const [open, setOpen] = React.useState(false);
  const ref = React.useRef(/** @type {HTMLSpanElement | null} */ (null));
  const byKeyboard = React.useRef(false);
  useMenuKeys(open, ref, byKeyboard);
  const chosen = props.options.find((o) => o.id === props.value);
  const anchor = h('span', { ref, tabIndex: -1, style: { display: 'inline-flex', maxWidth: '100%' } }, h(P.Button, {
    variant: 'outline', size: 'sm', className: 'dshr-picker',
    id: props.id, 'data-field': props.field, 'aria-haspopup': 'menu', 'aria-expanded': open ? 'true' : 'false',
    'aria-label': props.label, title: chosen ? chosen.label : props.placeholder,
    onClick: (e) => { byKeyboard.current = fromKeyboard(e); setOpen((o) => !o); },
  }, chosen ? chosen.label : props.placeholder, ' ', h(P.IconChevronDownOutline14, { 'aria-hidden': 'true' })));
  const focusAnchor = () => { const b = ref.current && ref.current.querySelector('button'); if (b) b.focus(); };
  return h(P.Menu, {
    open, anchor, portal: true, side: 'bottom', align: 'start',
    selectedId: props.value,
    items: props.options.map((o) => ({ id: o.id, label: h('span', { 'data-dshr-option': o.id, className: 'dshr-item', title: o.label }, o.label) })),
    onSelect: (id) => { setOpen(false); props.onChange(id); focusAnchor(); },
    onClose: () => { setOpen(false); focusAnchor(); },
  });
}

/** @param {ClientContext} ctx */
function makeSettingsCard(ctx) {
  /** @type {SettingsScope | null | undefined} */
  let scope;
  const bound = () => {
    if (!scope) {
      const binder = ctx.get('settingsScope');
      scope = binder ? binder.bind({ namespace: 'dsh-resilience' }) : null;
    }
    return scope;
  };
  return function ResilienceSettings() {
    const React = react();
    const h = React.createElement;
    const P = primitives();
    const locale = useLocale(ctx);
    /** @type {Translate} */
    const t = (k, v) => translate(locale, k, v);
    const s = bound();
    const subscribe = React.useCallback(/** @param {() => void} fn */ (fn) => (s ? s.subscribe(fn) : () => {}), [s]);
    const read = React.useCallback(() => (s ? s.getSnapshot() : undefined), [s]);
    const snap = React.useSyncExternalStore(subscribe, read, read);
    const [open, setOpen] = React.useState(false);
    const [draft, setDraft] = React.useState(/** @type {Draft | undefined} */ (undefined));
    const [resets, setResets] = React.useState(/** @type {string[]} */ ([])); // fields staged to re-inherit the row's base
    const [backup, setBackup] = React.useState(/** @type {string | undefined} */ (undefined));
    const [savedBackup, setSavedBackup] = React.useState(/** @type {string | undefined} */ (undefined)); // what the host has: written only when changed
    const [cands, setCands] = React.useState(/** @type {string[] | undefined} */ (undefined));
    const [note, setNote] = React.useState(/** @type {Note | undefined} */ (undefined));
    const [custom, setCustom] = React.useState(false); // the wait's own ms field shown for a preset value
    ensureStyle();
    React.useEffect(() => {
      const stop = new AbortController();
      call(ctx, 'candidates', {}, stop.signal).then((r) => {
        if (r && r.ok && !stop.signal.aborted) {
          setCands(r.value.candidates.map((c) => c.channel));
          setBackup((b) => (b === undefined ? r.value.backup || '' : b));
          setSavedBackup(r.value.backup || '');
        }
      });
      return () => stop.abort();
    }, []);
    const value = snap && snap.value;
    // A draft is made from the host's section once it comes, and again after
    // Restore defaults drops it: the section may have settled before the drop.
    React.useEffect(() => { if (value && draft === undefined) setDraft(draftOf(value)); }, [value, draft]);

    const saved = value ? draftOf(value) : undefined;
    const dirty = !!draft && !!saved && (!sameJson(draft, saved) || resets.length > 0 || (backup !== undefined && backup !== savedBackup));
    const title = t('settings.title');
    const toggle = () => setOpen((o) => !o);
    /** @param {ReactNode[]} children */
    const wrap = (children) => h('li', { 'data-testid': 'dsh-resilience-settings', className: 'dshr-card', 'data-open': open ? '' : undefined },
      h('div', {
        className: 'dshr-head', role: 'button', tabIndex: 0, 'data-role': 'card-header',
        'aria-expanded': open ? 'true' : 'false', 'aria-controls': 'dshr-card-body',
        'aria-label': `${t(open ? 'settings.collapse' : 'settings.expand')}: ${title}`,
        onClick: toggle,
        onKeyDown: (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); toggle(); } },
      },
      h('span', { className: 'dshr-headtext' }, h('span', { className: 'dshr-name-l' }, title), h('span', { className: 'dshr-desc' }, t('settings.description'))),
      dirty ? h('span', { className: 'dshr-pill' }, t('settings.unsaved')) : null,
      h(P.IconChevronDownOutline14, { className: 'dshr-chev', 'aria-hidden': 'true' })),
      open ? h('div', { className: 'dshr-body', id: 'dshr-card-body' }, ...children) : null);
    if (!s || !snap || snap.status === 'unavailable') return wrap([h('p', { key: 'u', className: 'dshr-fhint' }, t('settings.unavailable'))]);
    if (!draft) return wrap([h('p', { key: 'l', className: 'dshr-fhint' }, '…')]);

    // Edits happen only on a shown draft: `d` is there.
    /**
     * @template {Field} K
     * @param {K} k
     * @param {Draft[K]} v
     */
    const set = (k, v) => { setNote(undefined); setResets((r) => r.filter((x) => x !== k)); setDraft((d) => /** @type {Draft} */ ({ ...d, [k]: v })); };
    /** @param {string} k */
    const overridden = (k) => !resets.includes(k) && !!(snap.user && typeof snap.user === 'object' && Object.prototype.hasOwnProperty.call(snap.user, k));
    /** @param {string} k */
    const reset = (k) => {
      setNote(undefined);
      /** @type {Record<string, unknown>} */
      const base = draftOf(snap.base || {});
      setDraft((d) => /** @type {Draft} */ ({ ...d, [k]: base[k] }));
      setResets((r) => (r.includes(k) ? r : [...r, k]));
      if (k === 'backoffMaxMs') setCustom(false); // the picker shows what the wait falls back to
    };
    // One field as the stock cards lay it out: label (and the override badge
    // with its reset), the control, then the hint, or the message in its place.
    /**
     * @param {string} k
     * @param {string} label
     * @param {ReactNode} control
     * @param {string} [hint]
     */
    const field = (k, label, control, hint) => {
      const bad = note && note.kind === 'error' && note.field === k;
      return h('div', { key: k, className: 'dshr-field', 'data-invalid': bad ? '' : undefined },
        h('div', { className: 'dshr-fhead' },
          h('label', { className: 'dshr-label', htmlFor: `dshr-${k}` }, label),
          overridden(k) ? h('span', { className: 'dshr-pill' }, t('settings.overridden')) : null,
          overridden(k) ? h(P.Button, { variant: 'ghost', size: 'sm', 'data-action': `reset-${k}`, onClick: () => reset(k) }, t('settings.reset')) : null),
        control,
        bad ? h('p', { className: 'dshr-invalid', id: `dshr-${k}-msg`, role: 'alert', 'data-role': 'note', 'data-kind': 'error' }, note.text)
          : hint ? h('p', { className: 'dshr-fhint', id: `dshr-${k}-msg` }, hint) : null);
    };
    /** @param {string} k */
    const bad = (k) => !!(note && note.kind === 'error' && note.field === k);
    /** @param {NumberField} k */
    const input = (k) => field(k, t(`settings.${k}`), h(P.Input, {
      id: `dshr-${k}`, 'data-field': k, value: draft[k], inputMode: 'numeric',
      'aria-invalid': bad(k) ? 'true' : undefined, 'aria-describedby': `dshr-${k}-msg`,
      onChange: (e) => set(k, e.target.value),
    }), t(`settings.hint.${k}`));
    /**
     * @param {number} i
     * @param {number} d - places to move, up when negative
     */
    const move = (i, d) => { const c = draft.chain.slice(); const [x] = c.splice(i, 1); c.splice(i + d, 0, x); set('chain', c); };
    const chainRows = draft.chain.map((c, i) => h('li', { key: c, 'data-channel': c },
      h('span', { className: 'dshr-cname', title: c }, `${i + 1}. ${c}`),
      h(P.Button, { variant: 'ghost', size: 'sm', icon: h(P.IconChevronUpOutline14), 'data-action': 'up', 'aria-label': t('settings.moveUp', { channel: c }), title: t('settings.up'), disabled: i === 0, onClick: () => move(i, -1) }),
      h(P.Button, { variant: 'ghost', size: 'sm', icon: h(P.IconChevronDownOutline14), 'data-action': 'down', 'aria-label': t('settings.moveDown', { channel: c }), title: t('settings.down'), disabled: i === draft.chain.length - 1, onClick: () => move(i, 1) }),
      h(P.Button, { variant: 'ghost', size: 'sm', icon: h(P.IconTrashOutline16), 'data-action': 'remove', 'aria-label': t('settings.removeChannel', { channel: c }), title: t('settings.remove'), onClick: () => set('chain', draft.chain.filter((x) => x !== c)) })));
    const addable = (cands || []).filter((c) => !draft.chain.includes(c));

    const save = async () => {
      setNote({ kind: 'info', text: t('settings.saving') });
      const section = sectionOf(draft, snap.base);
      const checked = await call(ctx, 'validate', { section });
      const problem = checked && checked.ok ? checked.value.problem : (checked && checked.error && checked.error.message) || '?';
      if (problem) { setNote({ kind: 'error', text: localizeProblem(locale, problem), field: fieldOf(problem) }); return; }
      // The section the host holds: a draft is only made once it has come.
      const held = /** @type {Section} */ (value);
      try {
        for (const k of FIELDS) {
          const had = k === 'quota' && !hasQuota(held) ? undefined : held[k];
          if (resets.includes(k) || (section[k] === undefined && had !== undefined)) await s.unset(k);
          else if (section[k] === undefined) continue;
          else if (!sameJson(section[k], had)) await s.set(k, section[k]);
        }
        setResets([]);
        if (backup !== undefined && backup !== savedBackup) {
          const r = await call(ctx, 'set-backup', backup ? { channel: backup } : { clear: true });
          if (!r || !r.ok) { setNote({ kind: 'error', text: (r && r.error && r.error.message) || '?', field: 'backup' }); return; }
          setSavedBackup(backup);
        }
        // The draft as the host now resolves it: a cleared field (Reset, the
        // wait back on Default) falls back to the base, not to the value it had.
        /** @type {Record<string, unknown>} */
        const next = { ...held, ...section };
        /** @type {Record<string, unknown>} */
        const base = /** @type {Record<string, unknown>} */ (snap.base || {});
        for (const k of FIELDS) if (resets.includes(k) || section[k] === undefined) next[k] = base[k];
        setDraft(draftOf(next));
        setNote({ kind: 'ok', text: t('settings.saved') });
      } catch (e) {
        setNote({ kind: 'error', text: t('settings.saveFailed', { message: String((e && e.message) || e) }) });
      }
    };
    const restore = async () => {
      try {
        for (const k of FIELDS) await s.unset(k);
        await call(ctx, 'set-backup', { clear: true });
        setBackup('');
        setSavedBackup('');
        setResets([]);
        setCustom(false);
        setDraft(undefined);
        setNote({ kind: 'ok', text: t('settings.saved') });
      } catch (e) {
        setNote({ kind: 'error', text: t('settings.saveFailed', { message: String((e && e.message) || e) }) });
      }
    };
    // Custom is the picker's own state: left on, it would show Custom over a discarded wait.
    const discard = () => { setNote(undefined); setResets([]); setCustom(false); setDraft(saved); setBackup(savedBackup); };
    const footNote = note && !(note.kind === 'error' && note.field) ? note : undefined;
    /** @param {number} ms */
    const waitLabel = (ms) => (ms >= 60000 ? t('settings.wait.min', { n: ms / 60000 }) : t('settings.wait.s', { n: ms / 1000 }));
    const choice = custom ? CUSTOM : waitChoice(draft.backoffMaxMs);
    const wait = field('backoffMaxMs', t('settings.backoffMaxMs'), h('div', { style: { display: 'flex', gap: 6, flexWrap: 'wrap', minWidth: 0 } },
      h(Picker, {
        id: 'dshr-backoffMaxMs-preset', field: 'backoffMaxMs-preset', label: t('settings.backoffMaxMs'), value: choice,
        options: [
          { id: DEFAULT, label: t('settings.wait.default', { wait: waitLabel(draft.persistent ? DEFAULT_WAIT_MS.persistent : DEFAULT_WAIT_MS.plain) }) },
          ...WAIT_PRESETS.map((ms) => ({ id: String(ms), label: waitLabel(ms) })), { id: CUSTOM, label: `${t('settings.wait.custom')}…` }],
        onChange: (v) => { setCustom(v === CUSTOM); if (v === DEFAULT) set('backoffMaxMs', ''); else if (v !== CUSTOM) set('backoffMaxMs', v); },
      }),
      choice === CUSTOM ? h(P.Input, {
        id: 'dshr-backoffMaxMs', 'data-field': 'backoffMaxMs', value: draft.backoffMaxMs, inputMode: 'numeric',
        'aria-label': `${t('settings.backoffMaxMs')} (ms)`, 'aria-invalid': bad('backoffMaxMs') ? 'true' : undefined, 'aria-describedby': 'dshr-backoffMaxMs-msg',
        onChange: (e) => set('backoffMaxMs', e.target.value),
      }) : null), t('settings.hint.backoffMaxMs'));
    return wrap([
      input('failureThreshold'),
      input('cooldownMs'),
      wait,
      field('persistent', t('settings.persistent'), h(Picker, {
        id: 'dshr-persistent', field: 'persistent', label: t('settings.persistent'), value: draft.persistent ? 'on' : 'off',
        options: [{ id: 'off', label: t('settings.persistent.off') }, { id: 'on', label: t('settings.persistent.on') }],
        onChange: (v) => set('persistent', v === 'on'),
      }), t('settings.hint.persistent')),
      // dsh-reconnect's pair: the toggle, then the cap it turns on.
      field('retryUnknown', t('settings.retryUnknown'), h(Picker, {
        id: 'dshr-retryUnknown', field: 'retryUnknown', label: t('settings.retryUnknown'), value: draft.retryUnknown ? 'on' : 'off',
        options: [{ id: 'on', label: t('settings.retryUnknown.on') }, { id: 'off', label: t('settings.retryUnknown.off') }],
        onChange: (v) => set('retryUnknown', v === 'on'),
      }), t('settings.hint.retryUnknown')),
      input('unknownMaxRetries'),
      // dsh-reconnect's "Retry on quota": quota.defaultEnabled, merged into the row's quota by the host.
      field('quota', t('settings.quota'), h(Picker, {
        id: 'dshr-quota', field: 'quota', label: t('settings.quota'), value: draft.quota ? 'on' : 'off',
        options: [{ id: 'off', label: t('settings.quota.off') }, { id: 'on', label: t('settings.quota.on') }],
        onChange: (v) => set('quota', v === 'on'),
      }), t('settings.hint.quota')),
      field('recovery', t('settings.recovery'), h(Picker, {
        id: 'dshr-recovery', field: 'recovery', label: t('settings.recovery'), value: draft.recovery,
        options: [{ id: 'return', label: t('settings.recovery.return') }, { id: 'stay', label: t('settings.recovery.stay') }],
        onChange: (v) => set('recovery', v),
      })),
      field('chain', t('settings.chain'), h('div', { style: { display: 'flex', flexDirection: 'column', gap: 6, minWidth: 0 } },
        h('ol', { className: 'dshr-chain', 'data-field': 'chain', 'aria-label': t('settings.chain') }, ...chainRows),
        addable.length ? h(Picker, {
          id: 'dshr-chain-add', field: 'chain-add', label: t('settings.add'), value: '', placeholder: `${t('settings.add')}…`,
          options: addable.map((c) => ({ id: c, label: c })),
          onChange: (v) => { if (v) set('chain', [...draft.chain, v]); },
        }) : null)),
      field('backup', t('settings.backup'), h(Picker, {
        id: 'dshr-backup', field: 'backup', label: t('settings.backup'), value: backup || '',
        options: [{ id: '', label: t('menu.chainOrder') }, ...(cands || []).map((c) => ({ id: c, label: c }))],
        onChange: (v) => { setNote(undefined); setBackup(v); },
      }), t('settings.hint.backup')),
      h('div', { key: 'actions', className: 'dshr-foot' },
        footNote ? h('p', { key: 'note', className: footNote.kind === 'error' ? 'dshr-invalid' : 'dshr-fhint', role: 'status', 'data-role': 'note', 'data-kind': footNote.kind }, footNote.text) : null,
        h(P.Button, { variant: 'outline', size: 'sm', 'data-action': 'restore', onClick: () => { restore().catch(() => {}); } }, t('settings.restore')),
        h(P.Button, { variant: 'outline', size: 'sm', 'data-action': 'discard', disabled: !dirty, onClick: discard }, t('settings.discard')),
        h(P.Button, { variant: 'primary', size: 'sm', 'data-action': 'save', disabled: !dirty && !(note && note.kind === 'error'), onClick: () => { save().catch(() => {}); } }, t('settings.save'))),
    ].filter(Boolean));
  };
}

module.exports = { makeSettingsCard, draftOf, sectionOf, fieldOf, waitChoice, WAIT_PRESETS, DEFAULT_WAIT_MS };
