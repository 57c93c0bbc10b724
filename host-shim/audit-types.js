// @ts-check
// Every `type` an audit record may have, with its one-line meaning: the one
// definition. The audit writer (audit.js) checks each record against it, and
// host-shim/test/audit-types.test.mjs checks that docs/audit.md lists exactly
// these and that every type the shim's sources write is here. A new record
// type is added here first, then to docs/audit.md.

export const AUDIT_TYPES = Object.freeze({
  // Life of the plugin
  'boot': 'the plugin started: its pid, chain, tool allow-list, pools, balance providers, shared store',
  'stop': 'the plugin was disposed: its pid and the module failure counts; nothing is written after it',
  'module-failure': 'the first module error or wasm trap of each kind; the shim fell open to what the host does alone',
  'input': 'a policy input as the module received it (configure, decide, an adopting restore), for the what-if replay',
  'cold-pass': 'a new session\'s first request went as proposed before the module was up (the last run\'s module allowed it: cold-start.json; or a first run whose row has no pools or quota); told to the module once up, `sentAt` when it went',
  'cold-pass-missed': 'the module, once up, would have routed a request sent cold elsewhere: the channel it went to and the module\'s',
  // Breakers
  'circuit-open': 'a channel (or a provider, model "*") opened: cause, class, open until',
  'circuit-half-open': 'an open time ended: the next request (or probe) tests the channel',
  'circuit-closed': 'a channel or provider closed again: cause (recovered, balance-restored, ...)',
  'probe': 'the plugin sent its own tiny request to a half-open channel',
  'probe-result': 'a probe settled: ok, the failure code, how long it took',
  // Decisions about an agent
  'failover': 'an agent was moved from one channel to another: the code and class that moved it',
  'retry': 'the plugin retries on the same channel after a backoff: attempt, delay, code',
  'give-up': 'a failure went back to the host: the reason (budget-exhausted, recovery-timeout, ...), the code that ended it, and every channel tried since the last success',
  'aux-routed': 'a compaction or session-title call of the host was sent off an open channel: purpose, from, to',
  'spill': 'one request failed spillAfter times in a row on a channel: its next attempt went at once to the next routable target, without opening the channel',
  'skipped-too-small': 'a failover, backup, pool route or spill target was passed over for a request: its window (less the host\'s reserve) cannot hold the request\'s context; both numbers',
  'wait-cut': 'a held turn (a wait for a channel, or a long-term quota wait) ended early: a channel it may use is usable again',
  'return': 'an agent\'s request went back to the channel it had failed over from',
  'session-pick': 'the module noted a session\'s home or the user\'s model pick, kept with the session\'s settings so a restarted host still knows them',
  'effort-dropped': 'a reasoning effort was dropped because the target\'s model does not list it',
  'unroutable': 'a chain or backup target the host cannot serve: the config keys, the channel, the code',
  'routable': 'a target reported unroutable can be served again',
  'stall': 'a silent stream was cut: the channel, bound, silence, limit, chunks, purpose',
  'hedge': 'a request slow to its first token was also sent to the failover target: from, to, delay and why, who won (or how it ended), the first token, the time saved, how long the loser had waited',
  'slow': 'a channel turned slow: slow.minCalls calls in a row were slower than slow.firstTokenMs to their first token; new sessions and spills prefer another',
  'slow-probe': 'a slow channel\'s cooldown ended: one new session was let through to it as the probe',
  'slow-closed': 'a slow channel answered a call in time: it is no longer slow',
  // Backup and settings
  'backup': 'the backup channel was set or cleared: the channel and its source (command, web)',
  'backup-ignored': 'backup.json could not be read as a backup at start; no backup is used',
  'backup-not-saved': 'backup.json could not be written; the choice holds until the host stops',
  'backup-set-aside': 'backup.json did not parse; renamed backup.json.corrupt-<time>; no backup is used',
  'reconfigured': 'the settings card changed the live config: the keys that changed',
  'reconfigure-refused': 'a settings change the module refused; the running config stays',
  'settings-not-served': 'the settings namespace could not be registered; the card is not shown',
  // Notifications
  'notify-failed': 'a webhook notification was not taken after its tries: target index, origin, event, tries, reason',
  // Tool calls
  'tool-retry': 'a tool call failed transiently and is repeated: tool, call, attempt, reason, delay',
  'tool-exhausted': 'a repeated tool call ran out of attempts; its last failure went back',
  'tool-recovered': 'a repeat of a tool call succeeded',
  'tool-failed': 'a repeat of a tool call failed for good (not worth repeating again)',
  // Channel health, local file
  'health-merged': 'records from health.json were adopted: how many of how many',
  'health-skipped': 'records of health.json were skipped as malformed or too large, naming the field',
  'health-set-aside': 'health.json did not parse or was refused; renamed health.json.corrupt-<time> and rebuilt',
  'health-unavailable': 'health.json cannot be read or written (said once per trouble)',
  'health-available': 'health.json works again after health-unavailable',
  'cold-start-set-aside': 'cold-start.json did not parse; set aside (no cold start this run) and rebuilt at the next save',
  // Channel health, Redis
  'shared-merged': 'records published by other hosts through Redis were adopted',
  'shared-unavailable': 'Redis cannot be reached (said once per outage); local state goes on',
  'shared-restored': 'Redis is back; everything is read and written again',
  // Spent allowances
  'quota-wait-entered': 'a session entered a long-term wait: provider, pool, next attempt',
  'quota-wait-waiting': 'a later attempt of a long-term wait failed the same way: waiting again',
  'quota-wait-left': 'a long-term wait ended: reason recovered or disabled',
  'quota-routed': 'a session was moved to another route of its pool: from, to, cause',
  'quota-session': 'a session\'s quota switch, pool and route after a change, with where each comes from',
  'quota-switch': 'a session\'s quota switch was set (on, off, default) by the command or the web menu',
  'quota-pool': 'a session\'s pool was set (a pool, off, default) by the command or the web menu',
  'balance': 'a balance script ran: the number, or a short reason it gave none',
  'quota-marks-migrated': 'an older version\'s quota-marks.json was folded into health once at start (its live marks, as provider records) and renamed quota-marks.json.migrated',
  'quota-settings-inherited': 'a forked or delegated session took its ancestor\'s quota settings',
  'quota-settings-set-aside': 'quota-sessions.json did not parse; set aside and rebuilt',
  'quota-settings-ignored': 'quota-sessions.json could not be read; settings start from what is written next',
  'quota-settings-not-saved': 'quota-sessions.json could not be written (said once per trouble); the settings are written when it can be',
  'quota-settings-saved': 'quota-sessions.json is written again after quota-settings-not-saved',
  // The state directory and the audit log
  'state-unwritable': 'a state file of the state directory could not be written (a full disk, no permission): said once per outage, with the code',
  'state-writable': 'a state file was written again after state-unwritable',
  'audit-lost': 'audit lines dropped while the log could not be written (only the newest 100 wait): how many',
});

/**
 * An audit record as the tap's listeners see it (audit-tap.js): its `type`,
 * the time the log gave it, and the fields that type carries, each checked
 * by the reader that uses it.
 * @typedef {{type: string, at?: string, [field: string]: unknown}} AuditRecord
 */

/**
 * Whether `type` is a defined audit record type.
 * @param {unknown} type
 * @returns {type is string}
 */
export const isAuditType = (type) => typeof type === 'string' && Object.hasOwn(AUDIT_TYPES, type);
