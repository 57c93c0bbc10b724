// The web RPC's contract: what each endpoint of the host half (web.js,
// channel `/dsh-resilience`) takes from the browser client (client/*.cjs)
// and what it answers. Written by hand, and the only copy: web.js builds its
// answers as these types, the client reads them as these types, and
// `make typecheck` checks both sides against this file. A field the client
// reads that the contract lacks, or one the contract requires that web.js
// leaves out, is then a tsc error, not a blank chip in the browser.
//
// What the module already declares (policy-types.d.ts, generated from
// wit/policy.wit) is derived from its types here, so a change there reaches
// both sides. Channels travel as "provider/model" text, never as objects.

import type {
  Channel, CircuitState, QuotaMenu, Report, ResolvedConfig, SessionGiveUp, SessionView, SlowHealth, TriedChannel, Via,
} from './policy-types.js';

/** A breaker as `status` lists it: a channel's, or a provider's (model `*`). */
export interface Breaker {
  /** "provider/model"; "provider/*" for a provider's breaker. */
  channel: string;
  state: CircuitState;
  failures: number;
  /** Opens since the last close: the cooldown doubles with each. */
  opens: number;
  openUntilMs: number;
  /** The failure code that counted last; absent when there is none. */
  lastCode?: string;
}

/** A channel the slow-call breaker measured (policy/slow.go), with its time to first token. */
export interface SlowBreaker extends Omit<SlowHealth, 'channel'> {
  /** "provider/model" */
  channel: string;
}

/** A channel a give-up tried since the session's last success, with the code it failed with. */
export interface Tried extends Omit<TriedChannel, 'channel'> {
  /** "provider/model" */
  channel: string;
}

/**
 * An audit record as the page reads it (web.js forPage): the audit's
 * channels ({provider, model}) as "provider/model", a give-up's `tried`
 * each as {channel, code}. Which fields a record has depends on its type
 * (docs/audit.md). These are the ones the page reads; a record may carry
 * others.
 */
export interface AuditRecord {
  type: string;
  /** ISO time. */
  at: string;
  /** The session's agent id (the web's is the session id, maybe prefixed `session-`). */
  agent?: string;
  channel?: string;
  /** The channel left (failover, return, hedge); a breaker record's state before. */
  from?: string;
  to?: string;
  code?: string;
  class?: string;
  /** `give-up`: why (WIT GiveUpReason); `hedge`: how its delay was chosen. */
  reason?: string;
  /** `circuit-open`: ISO time. */
  openUntil?: string;
  /** `give-up`: every channel tried since the last success. */
  tried?: Tried[];
  failovers?: number;
  maxFailovers?: number;
  turn?: number;
  step?: number;
  /** `hedge`: primary, hedge or none. */
  winner?: string;
  /** `hedge`: how a race with no winner ended. */
  end?: string;
  /** `hedge`: the delay it was sent after. */
  afterMs?: number;
  /** `hedge`: the request's first token, from its start. */
  firstTokenMs?: number;
  /** `hedge`: how long the aborted call had waited. */
  loserWaitMs?: number;
  /** `hedge`: against the primary's median first token. */
  savedMs?: number;
}

/** A session's last give-up (WIT SessionGiveUp), worded as its `give-up` record is. */
export interface GiveUpRecord extends Omit<SessionGiveUp, 'channel' | 'tried'> {
  type: 'give-up';
  /** "provider/model" */
  channel: string;
  tried?: Tried[] | null;
}

/** The module's word on one session (its `view`, WIT SessionView), channels as "provider/model". */
export interface SessionStatus {
  /** As the browser named it. */
  id: string;
  /** Where it runs: its last routed request, else the host's selection, else the chain's primary. */
  route: string | null;
  /** Where it belongs, when it is away from it. */
  home: string | null;
  /** Where a failure of `route` would send it now, and why there; null: nowhere. */
  next: { channel: string; via: Via } | null;
  /** `route`, or the home it is away from, takes no request now. */
  avoided: SessionView['avoided'];
  /** Its last give-up, until its next request (the chip turns red). */
  giveUp: GiveUpRecord | null;
}

/**
 * A session's quota switch and pool with their sources, and the pools to
 * choose from (the module's `quota-menu`, through quota-web.js webView).
 * An `inherited` source is the parent session's setting, taken as a
 * snapshot when the session was forked.
 */
export interface QuotaView extends Omit<QuotaMenu, 'active' | 'pool'> {
  /** null: none (pools off, or no pool holds the session's route). */
  pool: string | null;
}

/** The `status` answer: what the chip and the dock show. */
export interface StatusAnswer {
  /** The long poll's: answered again when it moves. */
  revision: number;
  /** The module's clock when it answered: the countdowns run to `openUntilMs` on it, even when the browser's clock is off. */
  nowMs: number;
  /** The failover order, the primary first. */
  chain: string[];
  /** The user's backup; null: chain order. */
  backup: string | null;
  recovery: ResolvedConfig['recovery'];
  failureThreshold: number;
  channels: Breaker[];
  slow: SlowBreaker[];
  /** The dock's last decision: the module's (worded as its audit record) or the shim's own; absent before the first. */
  lastDecision?: AuditRecord;
  /** Whether the module answered with its breakers (false: it is not up). */
  moduleOk: boolean;
  /** "provider/model" -> the context window the host declares for it. */
  windows: Record<string, number>;
  /** When the poll names a session. */
  session?: SessionStatus;
  /** When the poll names a session and the row configures quota rules (the menu shows its items then). */
  quota?: QuotaView;
}

/** One model the picker may offer. */
export interface Candidate {
  provider: string;
  model: string;
  /** "provider/model" */
  channel: string;
  source: 'chain' | 'backup' | 'adapter';
  /** The adapter's name for the model. */
  name?: string;
  contextWindow?: number;
}

/** The `candidates` answer: what the picker offers (models the host resolves), and what the host cannot resolve. */
export interface CandidatesAnswer {
  chain: string[];
  backup: string | null;
  candidates: Candidate[];
  unknown: string[];
}

/** The `rows` answer: the session's records for its inline rows. */
export interface RowsAnswer {
  /**
   * The session's failover, give-up, return, retry and hedge records, and
   * the breaker openings on the channels they name, oldest first.
   */
  records: AuditRecord[];
  /**
   * Whether the row hedges requests (WIT configured.hedging): a hedge row's
   * candidate stands at every request, and without hedging the page does
   * not look for its record.
   */
  hedging: boolean;
}

/** The `validate` answer: the module's word on a settings section with the rest of the row, null when it takes it. */
export interface ValidateAnswer {
  problem: string | null;
}

/** The `report` answer: `/resilience report`'s numbers, text and timeline (report-command.js reportData). */
export interface ReportAnswer {
  report: Report;
  /** The report as `/resilience report` words it. */
  text: string;
  /** The timeline, the host's own markup. */
  svg: string;
}

/**
 * Each endpoint (`POST /dsh-resilience/<endpoint>`): the payload the client
 * sends and the answer. web.js takes a payload as unknown and checks every
 * field where it enters (rpc-input.js); the payloads here are what it
 * accepts, and the client's calls are checked against them.
 */
export interface Endpoints {
  /** A long poll: at once when `since` is not the host's revision, else when something changes, or after 20 s. */
  status: { payload: { since?: number; session?: string }; answer: StatusAnswer };
  candidates: { payload: {}; answer: CandidatesAnswer };
  /** The same write path as `/resilience backup`; `clear: true` goes back to chain order. Answers the status after it. */
  'set-backup': { payload: { clear: true } | { channel: string | Channel }; answer: StatusAnswer };
  /** The session's quota switch (`on`, `off`, `default`), through the commands' path. Answers the session's status after it. */
  'set-quota': { payload: { session: string; value: string }; answer: StatusAnswer };
  /** The session's pool (a pool's name, `off`, `default`), through the commands' path. Answers the session's status after it. */
  'set-pool': { payload: { session: string; value: string }; answer: StatusAnswer };
  rows: { payload: { session: string }; answer: RowsAnswer };
  validate: { payload: { section?: Record<string, unknown> }; answer: ValidateAnswer };
  /** `window`: `24h` when absent, `7d`, any `<n>h` or `<n>d`; `locale`: the timeline's language. */
  report: { payload: { window?: string; locale?: string }; answer: ReportAnswer };
}

/** What an endpoint answers. */
export type WebAnswer = Endpoints[keyof Endpoints]['answer'];

/**
 * A refusal as the host's RPC carries it (web.js refuse). The browser's
 * caller throws on an error code the host does not list, so our reason
 * (INVALID, REFUSED, UNKNOWN_SESSION, UNKNOWN_ENDPOINT) travels as the one
 * issue of the host's `bad-request`; a failure of ours is the host's
 * `internal`. The client's call() (client/shell.cjs) hands back our reason
 * as the code.
 */
export type Refusal =
  | { ok: false; error: { code: 'internal'; message: string; details: {} } }
  | { ok: false; error: { code: 'bad-request'; message: string; details: { issues: { code: string }[] } } };

/** The RPC handler's answer. */
export type RpcAnswer = { ok: true; value: WebAnswer } | Refusal;
