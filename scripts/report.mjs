#!/usr/bin/env node
// `make report LOG="a.jsonl [b.jsonl ...]" > report.html`: the report page
// over one or more hosts' audit logs, merged by time. Each log's rotated `.1`
// generation is read too when it is there. `--text` prints the text form
// (what `/resilience report` prints) instead; `--from`/`--to` (ISO times)
// set the window, which is otherwise the logs' first to last record.
// The module computes the report (build/dsh-resilience.wasm: `make wasm`);
// the logs are read as streams, so a log of any size reports.
import { existsSync } from 'node:fs';
import { compileModule } from '../host-shim/engine.js';
import { renderReportText } from '../host-shim/report.js';
import { renderReportHtml } from '../host-shim/report-html.js';
import { reportOfLogs } from '../host-shim/report-logs.js';

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const [, value] = args.splice(i, 2);
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) fail(`${name} "${value}" is not a time (e.g. 2026-12-01T00:00:00Z)`);
  return ms;
};
function fail(message) {
  process.stderr.write(`report: ${message}\nusage: make report LOG="audit.jsonl [other-host/audit.jsonl ...]" > report.html\n`);
  process.exit(2);
}
const text = args.includes('--text');
if (text) args.splice(args.indexOf('--text'), 1);
const window = { fromMs: opt('--from'), toMs: opt('--to') };
const paths = args.flatMap((a) => a.split(',')).filter(Boolean);
if (paths.length === 0) fail('no audit log given');
for (const p of paths) if (!existsSync(p)) fail(`${p}: no such file`);

const compiled = await compileModule().catch((e) => fail(`the module does not load (make wasm): ${e.message}`));
const report = await reportOfLogs(compiled, paths.map((p) => [`${p}.1`, p]), window);
if (report.skipped > 0) process.stderr.write(`report: ${report.skipped} unreadable or malformed records skipped\n`);
process.stdout.write(text ? renderReportText(report) + '\n' : renderReportHtml(report));
