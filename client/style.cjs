// The client's look, in the host's own design tokens (`--dsw-alias-*`, which
// the theme plugin switches between light and dark), so every part follows
// the host's theme. The stock plugin bundles add their CSS the same way: one
// `<style data-plugin-css>` tag, added once. It is added at first render, not
// at load: nothing runs at the bundle's top level (see entry.cjs).
// The settings card copies the stock plugin cards' layout (their chrome is not
// exported to plugins): header with name over description and a trailing
// chevron, fields with the message under the input, footer with the actions.
'use strict';

const TAG = 'dsh-resilience';

const CSS = `
.dshr-chip{border:1px solid var(--dsw-alias-border-l2);color:var(--dsw-alias-label-secondary);background:transparent;font:inherit;max-width:100%;min-width:0;min-height:28px;height:auto;white-space:normal;overflow-wrap:anywhere;text-align:left;line-height:1.3;padding:3px 10px;border-radius:14px;font-size:12px}
.dshr-chip[data-tone=warn]{border-color:var(--dsw-alias-state-warn-primary);color:var(--dsw-alias-state-warn-label,var(--dsw-alias-state-warn-primary));background:var(--dsw-alias-state-warn-tertiary)}
.dshr-chip[data-tone=error]{border-color:var(--dsw-alias-state-error-primary);color:var(--dsw-alias-state-error-primary);background:color-mix(in srgb,var(--dsw-alias-state-error-primary) 10%,transparent)}
.dshr-chip[data-tone=off]{color:var(--dsw-alias-label-tertiary);cursor:not-allowed}
.dshr-chip:hover:not(:disabled){border-color:var(--dsw-alias-label-dimmed)}
.dshr-chip:focus-visible{outline:2px solid var(--dsw-alias-brand-primary);outline-offset:1px}
.dshr-item{display:inline-flex;flex-wrap:wrap;gap:2px 8px;min-width:0;max-width:100%;white-space:normal;overflow-wrap:anywhere;line-height:1.35}
.dshr-item .dshr-hint{color:var(--dsw-alias-label-tertiary)}
.dshr-dock{display:block;width:100%;max-width:min(420px,calc(100vw - 48px));box-sizing:border-box;text-align:left;padding:4px 0;font-size:12px;line-height:18px;cursor:default;white-space:normal;color:var(--dsw-alias-label-secondary)}
.dshr-dock h3{font-size:12px;font-weight:600;margin:6px 0 0;color:var(--dsw-alias-label-primary)}
.dshr-dock ul{list-style:none;margin:0;padding:0}
.dshr-dock li{display:flex;flex-wrap:wrap;gap:0 8px;justify-content:space-between}
.dshr-dock .dshr-name{font-family:var(--dsw-alias-font-mono,ui-monospace,monospace);overflow-wrap:anywhere;min-width:0}
.dshr-dock [data-state=healthy] [data-role=state]{color:var(--dsw-alias-state-success-primary)}
.dshr-dock [data-state=open] [data-role=state]{color:var(--dsw-alias-state-warn-primary)}
.dshr-dock [data-state=half-open] [data-role=state]{color:var(--dsw-alias-brand-primary)}
.dshr-dock [data-state=slow] [data-role=state]{color:color-mix(in srgb,var(--dsw-alias-state-warn-primary) 55%,var(--dsw-alias-state-success-primary))}
.dshr-dock p{margin:6px 0 0;overflow-wrap:anywhere}
.dshr-row{margin:4px 0;padding:4px 10px;border-left:3px solid var(--dsw-alias-state-warn-primary);background:var(--dsw-alias-state-warn-tertiary);border-radius:4px;font-size:13px;color:var(--dsw-alias-label-primary);overflow-wrap:anywhere}
.dshr-row[data-kind=return]{border-left-color:var(--dsw-alias-state-success-primary);background:var(--dsw-alias-state-success-tertiary)}
.dshr-row[data-kind=give-up]{border-left-color:var(--dsw-alias-state-error-primary);background:color-mix(in srgb,var(--dsw-alias-state-error-primary) 10%,transparent)}
.dshr-row[data-kind=hedge]{border-left-color:var(--dsw-alias-brand-primary);background:color-mix(in srgb,var(--dsw-alias-brand-primary) 8%,transparent)}
.dshr-row summary{cursor:pointer;list-style:none;display:flex;align-items:center;gap:6px}
.dshr-row summary::-webkit-details-marker{display:none}
.dshr-row summary:focus-visible{outline:2px solid var(--dsw-alias-brand-primary);outline-offset:1px;border-radius:4px}
.dshr-row .dshr-chevron{flex:none;color:var(--dsw-alias-label-tertiary);transition:transform .16s;transform:rotate(-90deg)}
.dshr-row details[open] .dshr-chevron{transform:none}
.dshr-row dl{margin:4px 0 0 20px;display:grid;grid-template-columns:max-content minmax(0,1fr);gap:2px 12px;font-size:12px}
.dshr-row dt{color:var(--dsw-alias-label-tertiary)}
.dshr-row dd{margin:0;min-width:0}
.dshr-row ol{margin:0;padding-left:18px}
.dshr-card{border:1px solid var(--dsw-alias-border-l2);background:var(--dsw-alias-bg-layer-3);border-radius:12px;list-style:none;transition:border-color .16s,background .16s;color:var(--dsw-alias-label-primary)}
.dshr-card:hover,.dshr-card[data-open]{border-color:var(--dsw-alias-label-dimmed)}
.dshr-card[data-open]{background:var(--dsw-alias-bg-layer-2)}
.dshr-head{width:100%;box-sizing:border-box;text-align:left;cursor:pointer;border-radius:12px;align-items:center;gap:12px;padding:14px 16px;display:flex}
.dshr-head:focus-visible{outline:2px solid var(--dsw-alias-brand-primary);outline-offset:-2px}
.dshr-headtext{flex-direction:column;flex:1;gap:4px;min-width:0;display:flex}
.dshr-name-l{font-size:15px;font-weight:600;line-height:1.4}
.dshr-desc{color:var(--dsw-alias-label-tertiary);font-size:13px;line-height:1.5}
.dshr-pill{white-space:nowrap;background:var(--dsw-alias-bg-module-platform);color:var(--dsw-alias-label-secondary);border-radius:999px;flex:none;padding:1px 8px;font-size:11px;font-weight:500;line-height:17px}
.dshr-chev{color:var(--dsw-alias-label-tertiary);flex:none;transition:transform .16s}
.dshr-card[data-open] .dshr-chev{transform:rotate(180deg)}
.dshr-body{border-top:1px solid var(--dsw-alias-border-l2);margin:0 16px;padding-bottom:8px}
.dshr-field{flex-direction:column;gap:6px;padding:12px 0;display:flex;min-width:0}
.dshr-field+.dshr-field{border-top:1px solid var(--dsw-alias-border-l2)}
.dshr-fhead{align-items:center;gap:8px;display:flex;flex-wrap:wrap}
.dshr-label{min-width:0;flex:1;font-size:13px;font-weight:500;line-height:1.5}
.dshr-fhint{color:var(--dsw-alias-label-tertiary);margin:0;font-size:12px;line-height:1.5;overflow-wrap:anywhere}
.dshr-invalid{color:var(--dsw-alias-label-error,var(--dsw-alias-state-error-primary));margin:0;font-size:12px;line-height:1.5;overflow-wrap:anywhere}
.dshr-field[data-invalid] input{border-color:var(--dsw-alias-label-error,var(--dsw-alias-state-error-primary))}
.dshr-chain{list-style:none;padding:0;margin:0;display:flex;flex-direction:column;gap:4px}
.dshr-chain li{display:flex;gap:4px;align-items:center;min-width:0}
.dshr-chain .dshr-cname{flex:1;min-width:0;font-family:var(--dsw-alias-font-mono,ui-monospace,monospace);font-size:12px;overflow-wrap:anywhere}
.dshr-picker{align-self:flex-start;max-width:100%;white-space:normal;overflow-wrap:anywhere;text-align:left}
.dshr-foot{border-top:1px solid var(--dsw-alias-border-l2);justify-content:flex-end;align-items:center;gap:8px;padding:12px 0 4px;display:flex;flex-wrap:wrap}
.dshr-foot .dshr-invalid,.dshr-foot .dshr-fhint{flex:1;min-width:0}
.dshr-report{display:flex;flex-direction:column;gap:12px;min-width:0;color:var(--dsw-alias-label-primary)}
.dshr-report dl{display:grid;grid-template-columns:repeat(auto-fit,minmax(130px,1fr));gap:8px;margin:0}
.dshr-report dl div{border:1px solid var(--dsw-alias-border-l2);border-radius:8px;padding:8px 10px;min-width:0}
.dshr-report dt{font-size:12px;color:var(--dsw-alias-label-tertiary);overflow-wrap:anywhere}
.dshr-report dd{margin:2px 0 0;font-size:18px;font-weight:600}
.dshr-report .dshr-svg{background:var(--dsw-alias-bg-layer-2);border:1px solid var(--dsw-alias-border-l2);--dshr-up:color-mix(in srgb,var(--dsw-alias-state-success-primary) 40%,transparent);--dshr-num:var(--dsw-alias-state-error-primary);border-radius:8px;padding:8px;overflow-x:auto;max-width:100%;box-sizing:border-box}
.dshr-report table{border-collapse:collapse;font-size:12px;width:100%}
.dshr-report th,.dshr-report td{text-align:left;padding:2px 8px 2px 0;overflow-wrap:anywhere}
.dshr-report th{color:var(--dsw-alias-label-tertiary);font-weight:500}
.dshr-report .dshr-windows{display:flex;gap:6px;flex-wrap:wrap}
.dshr-modal{width:min(880px,calc(100vw - 32px));max-width:calc(100vw - 32px)}
`;

/** Adds the client's stylesheet to the page once. */
function ensureStyle() {
  if (typeof document === 'undefined') return;
  if (document.querySelector(`style[data-plugin-css="${TAG}"]`)) return;
  const tag = document.createElement('style');
  tag.dataset.plugin = TAG;
  tag.dataset.pluginCss = TAG;
  tag.textContent = CSS;
  document.head.appendChild(tag);
}

module.exports = { ensureStyle };
