import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import { ManualClock } from '../../../src/common/clock.js';
import { InProcessStore } from '../../../src/controller/store/in-process-store.js';
import { MetadataLockedError } from '../../../src/controller/store/metadata-files.js';
import { ANY_VERSION, type CoordinationStore, type Stat } from '../../../src/controller/store/store.js';
import { defineConformanceTests, type StoreHarness } from './conformance.js';

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);

function ok<T>(result: { ok: true; value: T } | { ok: false; code: string }): T {
  if (!result.ok) assert.fail(`expected success, got ${result.code}`);
  return result.value;
}

describe('in-process store: conformance', () => {
  const clock = new ManualClock();
  let store: InProcessStore;
  let counter = 0;
  beforeEach(() => {
    store = InProcessStore.open({ dataDir: null, clock });
  });
  afterEach(() => store.close());
  const harness: StoreHarness = {
    open: async (sessionTimeoutMs) =>
      sessionTimeoutMs === undefined ? store.openSession() : store.openSession({ sessionTimeoutMs }),
    disconnect: async (s) => store.disconnectSession(s.sessionId),
    outwait: async (s) => {
      clock.advance(s.sessionTimeoutMs);
      store.tick();
    },
    reconnect: async (s) => store.reconnectSession(s.sessionId),
    freshPath: () => `/t${++counter}`,
    eventWaitMs: 1000,
  };
  defineConformanceTests(() => harness);
});

describe('in-process store: persistence', () => {
  const dirs: string[] = [];
  const freshDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'brook-meta-'));
    dirs.push(dir);
    return join(dir, '__brook_metadata');
  };
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function populate(s: CoordinationStore): Promise<void> {
    ok(await s.create('/brokers', bytes('')));
    ok(await s.create('/brokers/topics', bytes('')));
    ok(await s.create('/brokers/topics/orders', bytes('{"version":3}')));
    ok(await s.set('/brokers/topics/orders', bytes('{"version":3,"partitions":{}}'), 0));
    ok(await s.create('/brokers/ids', bytes('')));
    ok(await s.create('/brokers/ids/1', bytes('{"version":5}'), 'ephemeral'));
    ok(await s.create('/brokers/topics/orders/n-', bytes('a'), 'persistent_sequential'));
  }

  it('keeps persistent nodes, data and versions across a reopen, and drops ephemerals', async () => {
    const dir = freshDir();
    const clock = new ManualClock();
    const first = InProcessStore.open({ dataDir: dir, clock });
    const s = first.openSession();
    await populate(s);
    const before = ok(await s.get('/brokers/topics/orders'));
    first.close();

    const second = InProcessStore.open({ dataDir: dir, clock });
    const t = second.openSession();
    const after = ok(await t.get('/brokers/topics/orders'));
    assert.equal(text(after.data), '{"version":3,"partitions":{}}');
    assert.deepEqual(after.stat, { ...before.stat, numChildren: 1 });
    assert.equal(ok(await t.exists('/brokers/ids/1')), null);
    assert.deepEqual(ok(await t.children('/brokers/ids')), []);
    assert.ok(t.sessionId > s.sessionId, 'session ids are not reused after a restart');
    second.close();
  });

  it('recovers from the log after a crash, with ephemerals gone and sequence numbers not reused', async () => {
    const dir = freshDir();
    const crashed = InProcessStore.open({ dataDir: dir });
    const s = crashed.openSession();
    await populate(s);
    ok(await s.create('/brokers/topics/orders/n-', bytes('eph'), 'ephemeral_sequential'));
    // No close: the process "dies" with its sessions; a second open reads what reached the disk.
    const recovered = InProcessStore.open({ dataDir: dir });
    const t = recovered.openSession();
    assert.deepEqual(ok(await t.children('/brokers/topics/orders')), ['n-0000000000']);
    assert.equal(ok(await t.exists('/brokers/ids/1')), null);
    const next = ok(await t.create('/brokers/topics/orders/n-', bytes('b'), 'persistent_sequential'));
    assert.equal(next, '/brokers/topics/orders/n-0000000002');
    recovered.close();
  });

  it('ignores a torn last line of the log', async () => {
    const dir = freshDir();
    const crashed = InProcessStore.open({ dataDir: dir });
    const s = crashed.openSession();
    ok(await s.create('/kept', bytes('1')));
    appendFileSync(join(dir, 'transactions.log'), '0badc0de {"zxid":99,"timeMs":0,"ops":[{"op":"cre');
    const recovered = InProcessStore.open({ dataDir: dir });
    const t = recovered.openSession();
    assert.equal(text(ok(await t.get('/kept')).data), '1');
    ok(await t.create('/after', bytes('2')));
    recovered.close();
    const third = InProcessStore.open({ dataDir: dir });
    const u = third.openSession();
    assert.deepEqual(ok(await u.children('/')), ['after', 'kept', 'zookeeper']);
    third.close();
    crashed.close();
  });

  it('flushes concurrent writes together and loses none of them in a crash', async () => {
    const dir = freshDir();
    const crashed = InProcessStore.open({ dataDir: dir });
    const s = crashed.openSession();
    ok(await s.create('/many', bytes('')));
    const writes = Array.from({ length: 300 }, (_, i) => s.create(`/many/${i}`, bytes(String(i))));
    for (const result of await Promise.all(writes)) ok(result);
    const stats = crashed.durabilityStats();
    assert.equal(stats.transactions, 301);
    assert.ok(stats.flushes < 100, `300 overlapping writes took ${stats.flushes} flushes`);
    const recovered = InProcessStore.open({ dataDir: dir });
    const t = recovered.openSession();
    assert.equal(ok(await t.children('/many')).length, 300);
    assert.equal(text(ok(await t.get('/many/299')).data), '299');
    recovered.close();
  });

  it('refuses a directory another live process has open, and takes over a dead one', async () => {
    const dir = freshDir();
    mkdirSync(dir, { recursive: true });
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      writeFileSync(join(dir, '.lock'), `${other.pid}\n`);
      assert.throws(() => InProcessStore.open({ dataDir: dir }), MetadataLockedError);
    } finally {
      other.kill('SIGKILL');
    }
    // A PID above Linux's largest possible one belongs to no process: the lock is stale.
    writeFileSync(join(dir, '.lock'), '99999999\n');
    const store = InProcessStore.open({ dataDir: dir });
    assert.equal(readFileSync(join(dir, '.lock'), 'utf8').trim(), String(process.pid));
    store.close();
    assert.equal(existsSync(join(dir, '.lock')), false);
  });

  it('replaces a long log by a snapshot and recovers the same tree', async () => {
    const dir = freshDir();
    const first = InProcessStore.open({ dataDir: dir, snapshotAfterLogBytes: 512 });
    const s = first.openSession();
    ok(await s.create('/counter', bytes('0')));
    for (let i = 1; i <= 50; i++) ok(await s.set('/counter', bytes(String(i)), i - 1));
    const stat = ok(await s.exists('/counter'));
    first.close();
    assert.deepEqual(readdirSync(dir).sort(), ['snapshot.json', 'transactions.log']);
    const second = InProcessStore.open({ dataDir: dir });
    const t = second.openSession();
    const node = ok(await t.get('/counter'));
    assert.equal(text(node.data), '50');
    assert.deepEqual(node.stat, stat);
    second.close();
  });
});

describe('in-process store: determinism and sessions', () => {
  async function script(clock: ManualClock): Promise<Stat[]> {
    const store = InProcessStore.open({ dataDir: null, clock });
    const a = store.openSession({ sessionTimeoutMs: 500 });
    const b = store.openSession();
    ok(await a.create('/controller', bytes('1'), 'ephemeral'));
    clock.advance(7);
    ok(await b.create('/controller_epoch', bytes('1')));
    store.disconnectSession(a.sessionId);
    clock.advance(499);
    store.tick();
    const stillThere = ok(await b.exists('/controller'));
    clock.advance(1);
    store.tick();
    const gone = ok(await b.exists('/controller'));
    assert.notEqual(stillThere, null, 'a session lives for its whole timeout');
    assert.equal(gone, null, 'and expires once it has passed');
    ok(await b.set('/controller_epoch', bytes('2'), ANY_VERSION));
    const result = [ok(await b.exists('/controller_epoch'))!, stillThere!];
    store.close();
    return result;
  }

  it('gives the same stats for the same operations under the same clock', async () => {
    const one = await script(new ManualClock(1_000, 0));
    const two = await script(new ManualClock(1_000, 0));
    assert.deepEqual(one, two);
    assert.equal(one[0]?.ctimeMs, 1_007);
    assert.equal(one[0]?.mtimeMs, 1_507);
  });

  it('answers CONNECTIONLOSS while a session is disconnected', async () => {
    const store = InProcessStore.open({ dataDir: null, clock: new ManualClock() });
    const s = store.openSession();
    store.disconnectSession(s.sessionId);
    const r = await s.get('/');
    assert.equal(!r.ok && r.code, 'CONNECTIONLOSS');
    store.reconnectSession(s.sessionId);
    assert.equal((await s.get('/')).ok, true);
    store.close();
  });
});
