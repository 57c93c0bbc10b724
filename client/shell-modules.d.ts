// What the web shell's module loader hands the client at run time (shell.cjs
// requires them lazily). The host installs no declarations for them, so they
// are untyped here; the client's own code is still checked.
declare module 'react';
declare module '@deepseek-ai/dsh-client-ui-primitives';
