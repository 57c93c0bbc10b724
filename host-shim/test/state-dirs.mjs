// State directories for tests that activate the plugin.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A state directory as a run leaves it when its module gave no word for a
 * cold start: the next run's module comes up before its first request. The
 * tests of what the module decides run there; an empty directory is a
 * first run's, whose first request goes cold (cold-start.js firstRunWord).
 * @param {string} prefix
 */
export async function usedStateDir(prefix) {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  await writeFile(join(dir, 'cold-start.json'), '{"coldPass":false}\n');
  return dir;
}

/**
 * An empty state directory: a first run's, with no health records yet.
 * @param {string} prefix
 */
export const firstRunStateDir = (prefix) => mkdtemp(join(tmpdir(), prefix));
