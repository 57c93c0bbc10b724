// @ts-check
// The plugin's stop, in order, within the host's 5 s (the host forces the
// exit after that): the webhooks' grace runs beside the rest, so a headless
// run's last notification (its give-up) gets its tries left (notify.js);
// nothing starts after the lifetime ends; health is saved once everything
// that could change it has stopped; the audit log's `stop` is its last line.

/**
 * @param {object} p
 * @param {import('./notify.js').Notifier} p.notifier
 * @param {import('./lifetime.js').Lifetime} p.life
 * @param {import('./engine.js').Engine} p.engine
 * @param {{dispose(): void}} p.waits
 * @param {{dispose(): void}} p.models
 * @param {{dispose(): Promise<unknown>}} p.quota
 * @param {import('./shell.js').Shell} p.shell
 * @param {import('./health.js').HealthStore} p.health
 * @param {(record: object) => void} p.report
 * @param {{flush(): Promise<unknown>}} p.audit
 */
export async function stop({ notifier, life, engine, waits, models, quota, shell, health, report, audit }) {
  const notified = notifier.dispose();
  await life.end(); // nothing starts after this; a bring-up under way ends first
  engine.dispose();
  waits.dispose();
  models.dispose();
  await quota.dispose();
  await shell.dispose();
  await health.queue; // a refresh in flight ends here; steps no longer act on it
  // Saved when it changed, or when the module's word on a cold start did (cold-start.js).
  if (shell.dirty || life.coldWordChanged()) await health.save();
  else if (life.firstWordUnsaid()) await health.firstWord();
  await health.close(); // from here on nothing is read or written
  await life.shared?.close(); // its last writes, if Redis answers at once
  await notified; // each delivery not taken is audited before `stop`: nothing is written after it
  report({ type: 'stop', pid: process.pid, moduleFailures: engine.failureCounts() });
  await audit.flush();
}
