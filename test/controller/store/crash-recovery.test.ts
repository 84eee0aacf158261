// Crash recovery of the in-process store's files, by brute force: a seeded run of random transactions is
// recorded, then its log is cut at many byte offsets (as a crash mid-write leaves it). Every cut must reopen,
// and the tree must be exactly the tree after the last transaction whose line is whole.

import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { ManualClock } from '../../../src/common/clock.js';
import { InProcessStore } from '../../../src/controller/store/in-process-store.js';
import type { CoordinationStore, Op } from '../../../src/controller/store/store.js';

const TRANSACTIONS = 300;
const CUTS = 60;

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'brook-crash-'));
  dirs.push(dir);
  return dir;
}

function random(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x100000000;
  };
}

/** The whole tree as text: every node's path, data, version and child version, parents first. */
async function view(s: CoordinationStore, path = '/'): Promise<string[]> {
  const node = await s.get(path);
  assert.ok(node.ok);
  const line = `${path} ${new TextDecoder().decode(node.value.data)} v${node.value.stat.version} c${node.value.stat.cversion}`;
  const children = await s.children(path);
  assert.ok(children.ok);
  const out = [line];
  for (const name of children.value)
    out.push(...(await view(s, path === '/' ? `/${name}` : `${path}/${name}`)));
  return out;
}

function randomOps(next: () => number): Op[] {
  const names = ['a', 'b', 'ü', 'd'];
  const ops: Op[] = [];
  const count = 1 + Math.floor(next() * 2);
  for (let i = 0; i < count; i++) {
    let path = '';
    const depth = 1 + Math.floor(next() * 2);
    for (let d = 0; d < depth; d++) path += `/${names[Math.floor(next() * names.length)]}`;
    const data = new TextEncoder().encode(`värde-${Math.floor(next() * 1000)}`);
    const r = next();
    if (r < 0.5)
      ops.push({ op: 'create', path, data, mode: next() < 0.2 ? 'persistent_sequential' : 'persistent' });
    else if (r < 0.85) ops.push({ op: 'set', path, data, version: -1 });
    else ops.push({ op: 'delete', path, version: -1 });
  }
  return ops;
}

it('reopens after a crash at any byte of the log with exactly the transactions whose lines are whole', async () => {
  const source = join(freshDir(), 'meta');
  // fsync is beside the point here (the cuts model what reached the disk) and would only slow the run.
  const store = InProcessStore.open({ dataDir: source, clock: new ManualClock(), fsync: false });
  const s = store.openSession();
  const views: string[][] = [await view(s)];
  const next = random(7);
  for (let i = 0; i < TRANSACTIONS; i++) {
    const result = await s.multi(randomOps(next));
    // Only committed transactions reach the log; a failed multi leaves no line and no new view.
    if (result.ok) views.push(await view(s));
  }
  assert.ok(views.length > 30, `enough transactions committed (${views.length - 1})`);
  const log = readFileSync(join(source, 'transactions.log'));
  const snapshot = readFileSync(join(source, 'snapshot.json'));
  const cut = random(11);
  for (let c = 0; c < CUTS; c++) {
    const at = c === 0 ? log.length : Math.floor(cut() * log.length);
    const dir = join(freshDir(), 'meta');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'snapshot.json'), snapshot);
    writeFileSync(join(dir, 'transactions.log'), log.subarray(0, at));
    const whole = log.subarray(0, at).toString('latin1').split('\n').length - 1;
    const reopened = InProcessStore.open({ dataDir: dir, fsync: false });
    const r = reopened.openSession();
    assert.deepEqual(await view(r), views[whole], `cut at byte ${at} keeps ${whole} transactions`);
    reopened.close();
  }
  store.close();
});

it('recovers when a crash fell between writing a snapshot and emptying the log', async () => {
  const dir = join(freshDir(), 'meta');
  const store = InProcessStore.open({ dataDir: dir });
  const s = store.openSession();
  for (let i = 0; i < 20; i++) assert.ok((await s.create(`/n${i}`, new TextEncoder().encode(String(i)))).ok);
  const expected = await view(s);
  const oldLog = join(freshDir(), 'old.log');
  copyFileSync(join(dir, 'transactions.log'), oldLog);
  store.close();
  // Reopening writes a snapshot covering everything and empties the log; put the old log back, as if the
  // crash came after the snapshot's rename but before the truncation.
  InProcessStore.open({ dataDir: dir }).close();
  copyFileSync(oldLog, join(dir, 'transactions.log'));
  const again = InProcessStore.open({ dataDir: dir });
  assert.deepEqual(await view(again.openSession()), expected);
  again.close();
});
