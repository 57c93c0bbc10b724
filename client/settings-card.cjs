// @ts-check
// The settings card (Settings → Plugins, keyed `dsh-resilience`): the live
// tunables through the host's settings scope, the backup through the same
// write path as the chip and `/resilience backup`. A draft is checked by the
// module (the host's `validate`) before anything is written, so an invalid
// value is refused with the module's own message and nothing changes.
'use strict';

const { react, useLocale, call } = require('./shell.cjs');
const { translate } = require('./i18n.cjs');

const NUMBERS = ['failureThreshold', 'cooldownMs', 'backoffMaxMs'];
const FIELDS = [...NUMBERS, 'recovery', 'chain'];

const sameJson = (a, b) => JSON.stringify(a) === JSON.stringify(b);

function draftOf(value) {
  const v = value || {};
  return {
    failureThreshold: String(v.failureThreshold ?? ''),
    cooldownMs: String(v.cooldownMs ?? ''),
    backoffMaxMs: String(v.backoffMaxMs ?? ''),
    recovery: v.recovery || 'return',
    chain: Array.isArray(v.chain) ? v.chain.map((c) => `${c.provider}/${c.model}`) : [],
  };
}

/** The draft as a settings section; numbers that do not parse go through as text for the module to name. */
function sectionOf(draft) {
  const out = {};
  for (const k of NUMBERS) out[k] = /^\s*-?\d+\s*$/.test(draft[k]) ? Number(draft[k]) : draft[k];
  out.recovery = draft.recovery;
  out.chain = draft.chain.map((c) => ({ provider: c.split('/')[0], model: c.slice(c.indexOf('/') + 1) }));
  return out;
}

function makeSettingsCard(ctx) {
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
    const locale = useLocale(ctx);
    const t = (k, v) => translate(locale, k, v);
    const s = bound();
    const subscribe = React.useCallback((fn) => (s ? s.subscribe(fn) : () => {}), [s]);
    const read = React.useCallback(() => (s ? s.getSnapshot() : undefined), [s]);
    const snap = React.useSyncExternalStore(subscribe, read, read);
    const [draft, setDraft] = React.useState(undefined);
    const [backup, setBackup] = React.useState(undefined);
    const [savedBackup, setSavedBackup] = React.useState(undefined); // what the host has: written only when changed
    const [cands, setCands] = React.useState(undefined);
    const [note, setNote] = React.useState(undefined);
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
    React.useEffect(() => { if (value && draft === undefined) setDraft(draftOf(value)); }, [value]);

    const wrap = (children) => h('li', { 'data-testid': 'dsh-resilience-settings', style: { listStyle: 'none', padding: 12, border: '1px solid var(--dsw-alias-color-border-subtle, #d0d7de)', borderRadius: 8, margin: '8px 0' } },
      h('div', { style: { fontWeight: 600, marginBottom: 8 } }, t('settings.title')), ...children);
    if (!s || !snap || snap.status === 'unavailable') return wrap([h('div', { key: 'u' }, t('settings.unavailable'))]);
    if (!draft) return wrap([h('div', { key: 'l' }, '…')]);

    const set = (k, v) => { setNote(undefined); setDraft((d) => ({ ...d, [k]: v })); };
    const input = (k) => h('label', { key: k, style: { display: 'flex', justifyContent: 'space-between', gap: 12, margin: '4px 0' } },
      h('span', null, t(`settings.${k}`)),
      h('input', { 'data-field': k, value: draft[k], onChange: (e) => set(k, e.target.value), style: { width: 120 } }));
    const move = (i, d) => { const c = draft.chain.slice(); const [x] = c.splice(i, 1); c.splice(i + d, 0, x); set('chain', c); };
    const chainRows = draft.chain.map((c, i) => h('li', { key: c, 'data-channel': c, style: { display: 'flex', gap: 6, alignItems: 'center' } },
      h('span', { style: { flex: 1, fontFamily: 'var(--dsw-alias-font-mono, monospace)' } }, `${i + 1}. ${c}`),
      h('button', { type: 'button', 'data-action': 'up', disabled: i === 0, onClick: () => move(i, -1) }, t('settings.up')),
      h('button', { type: 'button', 'data-action': 'down', disabled: i === draft.chain.length - 1, onClick: () => move(i, 1) }, t('settings.down')),
      h('button', { type: 'button', 'data-action': 'remove', onClick: () => set('chain', draft.chain.filter((x) => x !== c)) }, t('settings.remove'))));
    const addable = (cands || []).filter((c) => !draft.chain.includes(c));

    const save = async () => {
      setNote({ kind: 'info', text: t('settings.saving') });
      const section = sectionOf(draft);
      const checked = await call(ctx, 'validate', { section });
      const problem = checked && checked.ok ? checked.value.problem : (checked && checked.error && checked.error.message) || '?';
      if (problem) { setNote({ kind: 'error', text: problem }); return; }
      try {
        for (const k of FIELDS) if (!sameJson(section[k], value[k])) await s.set(k, section[k]);
        if (backup !== undefined && backup !== savedBackup) {
          const r = await call(ctx, 'set-backup', backup ? { channel: backup } : { clear: true });
          if (!r || !r.ok) { setNote({ kind: 'error', text: (r && r.error && r.error.message) || '?' }); return; }
          setSavedBackup(backup);
        }
        setNote({ kind: 'ok', text: t('settings.saved') });
      } catch (e) {
        setNote({ kind: 'error', text: String((e && e.message) || e) });
      }
    };
    const restore = async () => {
      try {
        for (const k of FIELDS) await s.unset(k);
        await call(ctx, 'set-backup', { clear: true });
        setBackup('');
        setSavedBackup('');
        setDraft(undefined);
        setNote({ kind: 'ok', text: t('settings.saved') });
      } catch (e) {
        setNote({ kind: 'error', text: String((e && e.message) || e) });
      }
    };
    return wrap([
      ...NUMBERS.map(input),
      h('label', { key: 'recovery', style: { display: 'flex', justifyContent: 'space-between', gap: 12, margin: '4px 0' } },
        h('span', null, t('settings.recovery')),
        h('select', { 'data-field': 'recovery', value: draft.recovery, onChange: (e) => set('recovery', e.target.value) },
          h('option', { value: 'return' }, t('settings.recovery.return')), h('option', { value: 'stay' }, t('settings.recovery.stay')))),
      h('div', { key: 'chain-h', style: { marginTop: 8 } }, t('settings.chain')),
      h('ol', { key: 'chain', 'data-field': 'chain', style: { listStyle: 'none', padding: 0, margin: '4px 0' } }, ...chainRows),
      addable.length ? h('select', { key: 'add', 'data-field': 'chain-add', value: '', onChange: (e) => { if (e.target.value) set('chain', [...draft.chain, e.target.value]); } },
        h('option', { value: '' }, `${t('settings.add')}…`), ...addable.map((c) => h('option', { key: c, value: c }, c))) : null,
      h('label', { key: 'backup', style: { display: 'flex', justifyContent: 'space-between', gap: 12, margin: '8px 0 4px' } },
        h('span', null, t('settings.backup')),
        h('select', { 'data-field': 'backup', value: backup || '', onChange: (e) => { setNote(undefined); setBackup(e.target.value); } },
          h('option', { value: '' }, t('menu.chainOrder')), ...(cands || []).map((c) => h('option', { key: c, value: c }, c)))),
      h('div', { key: 'actions', style: { display: 'flex', gap: 8, marginTop: 8 } },
        h('button', { type: 'button', 'data-action': 'save', onClick: () => { save().catch(() => {}); } }, t('settings.save')),
        h('button', { type: 'button', 'data-action': 'restore', onClick: () => { restore().catch(() => {}); } }, t('settings.restore'))),
      note ? h('div', { key: 'note', 'data-role': 'note', 'data-kind': note.kind, style: { marginTop: 6, color: note.kind === 'error' ? '#cf222e' : 'inherit' } }, note.text) : null,
    ].filter(Boolean));
  };
}

module.exports = { makeSettingsCard, draftOf, sectionOf };
