// The sweep of killed chaos runs' networks: it removes a tag whose namespaces are old and empty (with its veths,
// bridge and scratch directory) and leaves alone a tag with a process inside or one that is young. Real
// namespaces (root and iproute2, as the chaos harness itself needs); each case uses tags of its own and the sweep
// is told to look only at them, so a chaos run on the same machine is never touched.

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { run, tryRun } from './shell.js';
import { STALE_AFTER_MS, sweepStaleChaosNetworks } from './stale-networks.js';

const isRoot = process.getuid?.() === 0;

function freshTag(): string {
  // Random, as a real run's are: parallel test runs and chaos runs keep apart.
  return randomBytes(3).toString('hex').slice(0, 5);
}

async function makeRunNetwork(tag: string): Promise<void> {
  const netns = `brook-chaos-${tag}-zk`;
  await run('ip', ['link', 'add', `bc${tag}br`, 'type', 'bridge']);
  await run('ip', ['netns', 'add', netns]);
  await run('ip', ['link', 'add', `bc${tag}v0`, 'type', 'veth', 'peer', 'name', `bc${tag}n0`]);
  await run('ip', ['link', 'set', `bc${tag}n0`, 'netns', netns]);
  await run('ip', ['link', 'set', `bc${tag}v0`, 'master', `bc${tag}br`]);
  mkdirSync(join(tmpdir(), `brook-chaos-${tag}`, 'zk'), { recursive: true });
}

async function linkExists(name: string): Promise<boolean> {
  return (await tryRun('ip', ['link', 'show', name])).code === 0;
}

async function netnsExists(name: string): Promise<boolean> {
  return (await run('ip', ['netns', 'list'])).split('\n').some((l) => l.split(' ')[0] === name);
}

describe('sweep of killed chaos runs', { skip: isRoot ? false : 'needs root for network namespaces' }, () => {
  const tags: string[] = [];
  const children: ChildProcess[] = [];
  after(async () => {
    for (const child of children) child.kill('SIGKILL');
    for (const tag of tags) {
      await tryRun('umount', [join(tmpdir(), `brook-chaos-${tag}`, 'b0')]);
      rmSync(join(tmpdir(), `brook-chaos-${tag}`), { recursive: true, force: true });
      await tryRun('ip', ['link', 'del', `bc${tag}v0`]);
      await tryRun('ip', ['netns', 'del', `brook-chaos-${tag}-zk`]);
      await tryRun('ip', ['link', 'del', `bc${tag}br`]);
    }
  });

  it('removes an old empty run and keeps a busy one and a young one', async () => {
    const [stale, busy, young] = [freshTag(), freshTag(), freshTag()];
    tags.push(stale, busy, young);
    for (const tag of tags) await makeRunNetwork(tag);
    const staleTmpfs = join(tmpdir(), `brook-chaos-${stale}`, 'b0');
    mkdirSync(staleTmpfs);
    await run('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'brook-chaos-tmpfs', staleTmpfs]);
    const sleeper = spawn('ip', ['netns', 'exec', `brook-chaos-${busy}-zk`, 'sleep', '120'], {
      stdio: 'ignore',
    });
    children.push(sleeper);
    const deadline = Date.now() + 30_000;
    while ((await run('ip', ['netns', 'pids', `brook-chaos-${busy}-zk`])).trim() === '') {
      assert(Date.now() < deadline, 'the sleeper never entered its namespace');
      await new Promise((r) => setTimeout(r, 50));
    }

    // The young run was made just now; the others are looked at as if two stale periods had passed.
    const youngResult = await sweepStaleChaosNetworks({ onlyTags: new Set([young]) });
    assert.deepEqual(youngResult, { swept: [], kept: [young] });
    const later = Date.now() + 2 * STALE_AFTER_MS;
    const result = await sweepStaleChaosNetworks({ now: later, onlyTags: new Set([stale, busy]) });
    assert.deepEqual(result.swept, [stale]);
    assert.deepEqual(result.kept, [busy]);

    assert.equal(await netnsExists(`brook-chaos-${stale}-zk`), false);
    assert.equal(await linkExists(`bc${stale}br`), false);
    assert.equal(await linkExists(`bc${stale}v0`), false);
    assert.equal(
      existsSync(join(tmpdir(), `brook-chaos-${stale}`)),
      false,
      'the scratch directory and its tmpfs',
    );
    for (const kept of [busy, young]) {
      assert.equal(await netnsExists(`brook-chaos-${kept}-zk`), true);
      assert.equal(await linkExists(`bc${kept}br`), true);
      assert.equal(existsSync(join(tmpdir(), `brook-chaos-${kept}`)), true);
    }
  });
});
