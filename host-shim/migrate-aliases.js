// @ts-check
// The bound on YAML aliases. js-yaml (the host's reader) gives every alias
// of an anchor the same object, so a few hundred bytes of nested aliases (a
// "billion laughs") parse at once into a small graph that every later step
// (JSON for the module, the table, the printed row) walks as a tree of
// billions of values: minutes, then a crash. An alias inside its own anchor
// (`&a [*a]`) is a value that holds itself, and no walk of it ends. js-yaml
// has no bound of its own (the `yaml` package's maxAliasCount), so this is
// it, counted on the parsed value in one pass over the graph.

/**
 * How many values aliases may add beyond those the text writes out. A patch
 * file that reuses a chain or a pool through an anchor adds a few dozen; a
 * real row never comes near this.
 */
export const MAX_ALIASED_VALUES = 100_000;

/**
 * Why a parsed value is refused, if it is: its aliases repeat more than
 * MAX_ALIASED_VALUES values, or one holds itself.
 * @param {unknown} doc
 * @returns {string | undefined}
 */
export function aliasProblem(doc) {
  /** @type {Map<object, number>} a value met before -> its size, every alias expanded */
  const sizes = new Map();
  /** @type {Set<object>} the values being walked (a value met again in here holds itself) */
  const open = new Set();
  let written = 0; // values walked once each: what the text writes out
  /** @param {unknown} v @returns {number} */
  const size = (v) => {
    if (v === null || typeof v !== 'object') {
      written++;
      return 1;
    }
    const known = sizes.get(v);
    if (known !== undefined) return known; // an alias: its size again, walked once
    if (open.has(v)) throw new Cycle();
    open.add(v);
    written++;
    let n = 1;
    for (const child of Object.values(v)) n += size(child);
    open.delete(v);
    sizes.set(v, n);
    return n;
  };
  try {
    const expanded = size(doc);
    if (expanded - written > MAX_ALIASED_VALUES) {
      return `its aliases repeat more than ${MAX_ALIASED_VALUES} values (nested aliases, a "billion laughs"?): refused; write the values out`;
    }
  } catch (e) {
    if (e instanceof Cycle) return 'an alias inside the value its anchor names makes a value that holds itself: refused';
    throw e;
  }
  return undefined;
}

/** Thrown out of the walk when a value holds itself. */
class Cycle extends Error {}
