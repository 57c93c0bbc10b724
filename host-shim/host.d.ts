// The host's own declarations for what the shim uses of `ctx`: each package
// below adds its service or events to Cordis's Context (`ctx.llm`,
// `ctx.commands`, `agent/request`, `tools/execute`, ...). For `make typecheck`
// only: the shim imports none of them at run time, and tsconfig.json finds
// them in the installed host (build/host-node_modules).
import '@deepseek-ai/dsh-agent';
import '@deepseek-ai/dsh-commands';
import '@deepseek-ai/dsh-credentials';
import '@deepseek-ai/dsh-llm';
import '@deepseek-ai/dsh-session-projection';
import '@deepseek-ai/dsh-subprocess';
import '@deepseek-ai/dsh-tools';

export type { Context } from '@deepseek-ai/cordis';

// The Cordis events this plugin emits (effects.js EVENTS): other plugins may
// listen to them. Each carries the effect that caused it, as the module
// answered it (policy-types.d.ts); the probe event its outcome.
declare module '@deepseek-ai/cordis' {
  interface Events {
    'dsh-resilience/circuit-opened'(payload: object): void;
    'dsh-resilience/circuit-closed'(payload: object): void;
    'dsh-resilience/failover'(payload: object): void;
    'dsh-resilience/give-up'(payload: object): void;
    'dsh-resilience/probe'(payload: object): void;
    'dsh-resilience/spill'(payload: object): void;
    'dsh-resilience/stall'(payload: object): void;
    'dsh-resilience/slow'(payload: object): void;
    'dsh-resilience/hedge'(payload: object): void;
    'dsh-resilience/tool-retry'(payload: object): void;
  }
}
