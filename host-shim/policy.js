// @ts-check
// The policy module behind its fail-open wrapper: the engine (engine.js).
// `Policy` is the engine's older name, kept for the unit tests and tools that
// build one directly on a compiled module.
export { Engine as Policy, compileModule, inputRecord, WASM_PATH, TrapError, ModuleError } from './engine.js';
