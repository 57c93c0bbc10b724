import { test } from 'node:test';
import assert from 'node:assert/strict';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { resolveStateDir } from '../index.js';

test('stateDir: ~ is the user\'s home, a relative path is taken against DSH_HOME', () => {
  const saved = process.env.DSH_HOME;
  try {
    process.env.DSH_HOME = '/srv/dsh-home';
    assert.equal(resolveStateDir(undefined), '/srv/dsh-home/dsh-resilience');
    assert.equal(resolveStateDir('state/x'), '/srv/dsh-home/state/x', 'not against the working directory');
    assert.equal(resolveStateDir('../shared'), '/srv/shared');
    assert.equal(resolveStateDir('~'), homedir());
    assert.equal(resolveStateDir('~/dshr'), join(homedir(), 'dshr'));
    assert.equal(resolveStateDir('/abs/dir'), '/abs/dir');
    assert.equal(resolveStateDir('~user/x'), '/srv/dsh-home/~user/x', 'only ~ and ~/ are expanded');
    delete process.env.DSH_HOME;
    assert.equal(resolveStateDir('rel'), join(homedir(), '.dsh', 'rel'));
  } finally {
    if (saved === undefined) delete process.env.DSH_HOME;
    else process.env.DSH_HOME = saved;
  }
});
