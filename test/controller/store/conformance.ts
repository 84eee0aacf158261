// The behaviour every CoordinationStore must show, run against the in-process store and against a real
// ZooKeeper through the ZooKeeper store. A harness opens sessions and injects connection faults in the way
// its implementation allows; the assertions are the same for both.

import assert from 'node:assert/strict';
import { afterEach, it } from 'node:test';
import {
  ANY_VERSION,
  type CoordinationStore,
  type SessionEvent,
  type WatchEvent,
} from '../../../src/controller/store/store.js';

export interface StoreHarness {
  /** Opens a new session. */
  open(sessionTimeoutMs?: number): Promise<CoordinationStore>;
  /** Cuts the session's link to the store without ending the session. */
  disconnect(store: CoordinationStore): Promise<void>;
  /** Lets more than the session timeout pass while the session is cut off. */
  outwait(store: CoordinationStore): Promise<void>;
  /** Gives the link back. */
  reconnect(store: CoordinationStore): Promise<void>;
  /** A base path no other test uses; it does not exist yet. */
  freshPath(): string;
  /** How long to wait for an event before calling it missing. */
  readonly eventWaitMs: number;
}

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);

/** Collects one-shot watch events so a test can await them. */
class EventCollector<T> {
  readonly seen: T[] = [];
  private waiters: Array<() => void> = [];

  readonly push = (event: T): void => {
    this.seen.push(event);
    for (const w of this.waiters.splice(0)) w();
  };

  async waitFor(count: number, timeoutMs: number): Promise<T[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.seen.length < count) {
      const left = deadline - Date.now();
      if (left <= 0)
        assert.fail(`expected ${count} events within ${timeoutMs} ms, saw ${JSON.stringify(this.seen)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.seen;
  }
}

function ok<T>(result: { ok: true; value: T } | { ok: false; code: string }): T {
  if (!result.ok) assert.fail(`expected success, got ${result.code}`);
  return result.value;
}

/** Lets queued events be delivered: a few macrotask turns for the in-process store, a round trip for ZooKeeper. */
async function settle(store: CoordinationStore): Promise<void> {
  await store.exists('/');
  await new Promise((resolve) => setTimeout(resolve, 20));
}

export function defineConformanceTests(harness: () => StoreHarness): void {
  const opened: CoordinationStore[] = [];
  const open = async (timeoutMs?: number) => {
    const store = await harness().open(timeoutMs);
    opened.push(store);
    return store;
  };
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });

  it('creates a node and reads back its data with version 0', async () => {
    const s = await open();
    const base = harness().freshPath();
    assert.equal(ok(await s.create(base, bytes('hello'))), base);
    const node = ok(await s.get(base));
    assert.equal(text(node.data), 'hello');
    assert.equal(node.stat.version, 0);
    assert.equal(node.stat.dataLength, 5);
    assert.equal(node.stat.ephemeralOwner, null);
    assert.ok(node.stat.czxid > 0 && node.stat.czxid === node.stat.mzxid);
  });

  it('refuses to create an existing node, one without a parent, or under an ephemeral', async () => {
    const s = await open();
    const base = harness().freshPath();
    ok(await s.create(base, bytes('')));
    assert.deepEqual(await s.create(base, bytes('')), { ok: false, code: 'NODEEXISTS', path: base });
    const orphan = await s.create(`${base}/missing/child`, bytes(''));
    assert.equal(orphan.ok, false);
    assert.equal(!orphan.ok && orphan.code, 'NONODE');
    ok(await s.create(`${base}/eph`, bytes(''), 'ephemeral'));
    const under = await s.create(`${base}/eph/child`, bytes(''));
    assert.equal(!under.ok && under.code, 'NOCHILDRENFOREPHEMERALS');
  });

  it('answers BADARGUMENTS for malformed paths', async () => {
    const s = await open();
    for (const bad of ['', 'relative', '/trailing/', '/double//slash', '/dot/.', '/dotdot/..']) {
      const r = await s.create(bad, bytes(''));
      assert.equal(!r.ok && r.code, 'BADARGUMENTS', `path ${JSON.stringify(bad)}`);
      const g = await s.get(bad);
      assert.equal(!g.ok && g.code, 'BADARGUMENTS', `get ${JSON.stringify(bad)}`);
    }
  });

  it('sets data only when the expected version matches, and bumps the version', async () => {
    const s = await open();
    const base = harness().freshPath();
    ok(await s.create(base, bytes('v0')));
    const stat1 = ok(await s.set(base, bytes('v1'), 0));
    assert.equal(stat1.version, 1);
    const stale = await s.set(base, bytes('lost'), 0);
    assert.deepEqual(stale, { ok: false, code: 'BADVERSION', path: base });
    assert.equal(text(ok(await s.get(base)).data), 'v1');
    const stat2 = ok(await s.set(base, bytes('v2'), ANY_VERSION));
    assert.equal(stat2.version, 2);
    assert.ok(stat2.mzxid > stat1.mzxid);
    const missing = await s.set(`${base}/none`, bytes(''), ANY_VERSION);
    assert.equal(!missing.ok && missing.code, 'NONODE');
  });

  it('deletes only a childless node whose version matches', async () => {
    const s = await open();
    const base = harness().freshPath();
    ok(await s.create(base, bytes('')));
    ok(await s.create(`${base}/child`, bytes('')));
    assert.equal(((await s.delete(base, ANY_VERSION)) as { code?: string }).code, 'NOTEMPTY');
    ok(await s.set(`${base}/child`, bytes('x'), 0));
    assert.equal(((await s.delete(`${base}/child`, 0)) as { code?: string }).code, 'BADVERSION');
    ok(await s.delete(`${base}/child`, 1));
    ok(await s.delete(base, 0));
    assert.equal(ok(await s.exists(base)), null);
    const again = await s.delete(base, ANY_VERSION);
    assert.equal(!again.ok && again.code, 'NONODE');
  });

  it('lists children sorted and counts them in the stat', async () => {
    const s = await open();
    const base = harness().freshPath();
    ok(await s.create(base, bytes('')));
    for (const name of ['b', 'c', 'a']) ok(await s.create(`${base}/${name}`, bytes('')));
    assert.deepEqual(ok(await s.children(base)), ['a', 'b', 'c']);
    const stat = ok(await s.exists(base));
    assert.equal(stat?.numChildren, 3);
    assert.equal(stat?.cversion, 3);
    const none = await s.children(`${base}/zzz`);
    assert.equal(!none.ok && none.code, 'NONODE');
  });

  it('reads children with the parent stat in one read', async () => {
    const s = await open();
    const base = harness().freshPath();
    ok(await s.create(base, bytes('')));
    for (const name of ['b', 'a']) ok(await s.create(`${base}/${name}`, bytes('')));
    ok(await s.delete(`${base}/b`, ANY_VERSION));
    const read = ok(await s.childrenWithStat(base));
    assert.deepEqual(read.names, ['a']);
    assert.deepEqual(read.stat, ok(await s.exists(base)));
    assert.equal(read.stat.cversion, 3);
    const none = await s.childrenWithStat(`${base}/zzz`);
    assert.equal(!none.ok && none.code, 'NONODE');
  });

  it('names sequential nodes by the count of children ever created, in ten digits', async () => {
    const s = await open();
    const base = harness().freshPath();
    ok(await s.create(base, bytes('')));
    ok(await s.create(`${base}/plain`, bytes('')));
    const first = ok(await s.create(`${base}/config_change_`, bytes('a'), 'persistent_sequential'));
    const second = ok(await s.create(`${base}/config_change_`, bytes('b'), 'ephemeral_sequential'));
    assert.equal(first, `${base}/config_change_0000000001`);
    assert.equal(second, `${base}/config_change_0000000002`);
    assert.equal(text(ok(await s.get(first)).data), 'a');
    // A delete moves the reported child version but not the sequence: ZooKeeper counts creations only.
    ok(await s.delete(`${base}/plain`, ANY_VERSION));
    assert.equal(ok(await s.exists(base))?.cversion, 4);
    const third = ok(await s.create(`${base}/config_change_`, bytes('c'), 'persistent_sequential'));
    assert.equal(third, `${base}/config_change_0000000003`);
  });

  it('marks ephemeral nodes with their session and deletes them when the session closes', async () => {
    const owner = await open();
    const other = await open();
    const base = harness().freshPath();
    ok(await owner.create(base, bytes('')));
    ok(await owner.create(`${base}/1`, bytes('{"broker":1}'), 'ephemeral'));
    assert.equal(ok(await other.exists(`${base}/1`))?.ephemeralOwner, owner.sessionId);
    assert.notEqual(owner.sessionId, other.sessionId);
    assert.match(owner.sessionId, /^[0-9a-f]{16}$/);
    const gone = new EventCollector<WatchEvent>();
    ok(await other.exists(`${base}/1`, gone.push));
    const events = new EventCollector<SessionEvent>();
    owner.onSessionEvent(events.push);
    await owner.close();
    assert.deepEqual(await gone.waitFor(1, harness().eventWaitMs), [{ type: 'deleted', path: `${base}/1` }]);
    assert.equal(ok(await other.exists(`${base}/1`)), null);
    assert.equal(ok(await other.exists(base))?.numChildren, 0);
    assert.deepEqual(events.seen, ['closed']);
    const after = await owner.get(base);
    assert.equal(!after.ok && after.code, 'SESSIONEXPIRED');
  });

  // Self-healing's flap detection (self-healing-state.ts, unseenRegistrations) relies on this: a registration
  // that came and went between two reads leaves the same children but a child version two higher.
  it('counts an ephemeral child deleted by its session closing in the parent child version', async () => {
    const owner = await open();
    const other = await open();
    const base = harness().freshPath();
    ok(await other.create(base, bytes('')));
    ok(await other.create(`${base}/1`, bytes(''), 'ephemeral'));
    const before = ok(await other.exists(base))!;
    ok(await owner.create(`${base}/2`, bytes(''), 'ephemeral'));
    assert.equal(ok(await other.exists(base))?.cversion, before.cversion + 1, 'a creation counts');
    await owner.close();
    const after = ok(await other.exists(base))!;
    assert.deepEqual(ok(await other.children(base)), ['1'], 'the children are as before');
    assert.equal(after.cversion, before.cversion + 2, 'the deletion counts too');
    // A plain delete of an ephemeral child counts the same way.
    ok(await other.delete(`${base}/1`, ANY_VERSION));
    assert.equal(ok(await other.exists(base))?.cversion, before.cversion + 3);
  });

  it('keeps the session and its ephemerals over a short disconnection', async () => {
    const s = await open(4000);
    const base = harness().freshPath();
    ok(await s.create(base, bytes('')));
    ok(await s.create(`${base}/eph`, bytes(''), 'ephemeral'));
    const events = new EventCollector<SessionEvent>();
    s.onSessionEvent(events.push);
    await harness().disconnect(s);
    await events.waitFor(1, harness().eventWaitMs);
    await harness().reconnect(s);
    assert.deepEqual(await events.waitFor(2, harness().eventWaitMs), ['disconnected', 'reconnected']);
    assert.equal(ok(await s.exists(`${base}/eph`))?.ephemeralOwner, s.sessionId);
  });

  it('expires a session cut off for longer than its timeout and deletes its ephemerals', async () => {
    const s = await open(1000);
    const watcher = await open();
    const base = harness().freshPath();
    ok(await watcher.create(base, bytes('')));
    ok(await s.create(`${base}/controller`, bytes('{"brokerid":1}'), 'ephemeral'));
    const deleted = new EventCollector<WatchEvent>();
    ok(await watcher.get(`${base}/controller`, deleted.push));
    const events = new EventCollector<SessionEvent>();
    s.onSessionEvent(events.push);
    await harness().disconnect(s);
    await harness().outwait(s);
    await harness().reconnect(s);
    assert.deepEqual(await events.waitFor(2, harness().eventWaitMs), ['disconnected', 'expired']);
    assert.deepEqual(await deleted.waitFor(1, harness().eventWaitMs), [
      { type: 'deleted', path: `${base}/controller` },
    ]);
    assert.equal(ok(await watcher.exists(`${base}/controller`)), null);
    const dead = await s.create(`${base}/late`, bytes(''));
    assert.equal(!dead.ok && dead.code, 'SESSIONEXPIRED');
  });

  it('fires a data watch once, after the change', async () => {
    const writer = await open();
    const reader = await open();
    const base = harness().freshPath();
    ok(await writer.create(base, bytes('a')));
    const events = new EventCollector<WatchEvent>();
    const seenData: string[] = [];
    ok(
      await reader.get(base, (e) => {
        events.push(e);
        void reader.get(base).then((r) => r.ok && seenData.push(text(r.value.data)));
      }),
    );
    ok(await writer.set(base, bytes('b'), 0));
    assert.deepEqual(await events.waitFor(1, harness().eventWaitMs), [{ type: 'dataChanged', path: base }]);
    ok(await writer.set(base, bytes('c'), 1));
    await settle(reader);
    await settle(reader);
    assert.equal(events.seen.length, 1, 'a one-shot watch fires only once');
    assert.ok(seenData.length === 1 && (seenData[0] === 'b' || seenData[0] === 'c'));
  });

  it('fires a watcher registered twice on the same node only once', async () => {
    const s = await open();
    const base = harness().freshPath();
    ok(await s.create(base, bytes('a')));
    const events = new EventCollector<WatchEvent>();
    ok(await s.get(base, events.push));
    ok(await s.get(base, events.push));
    ok(await s.set(base, bytes('b'), ANY_VERSION));
    await events.waitFor(1, harness().eventWaitMs);
    await settle(s);
    assert.equal(events.seen.length, 1);
  });

  it('fires an exists watch on creation and a child watch on a new child', async () => {
    const writer = await open();
    const reader = await open();
    const base = harness().freshPath();
    const created = new EventCollector<WatchEvent>();
    assert.equal(ok(await reader.exists(base, created.push)), null);
    ok(await writer.create(base, bytes('')));
    assert.deepEqual(await created.waitFor(1, harness().eventWaitMs), [{ type: 'created', path: base }]);
    const children = new EventCollector<WatchEvent>();
    assert.deepEqual(ok(await reader.children(base, children.push)), []);
    ok(await writer.create(`${base}/0`, bytes('')));
    assert.deepEqual(await children.waitFor(1, harness().eventWaitMs), [
      { type: 'childrenChanged', path: base },
    ]);
    const deleted = new EventCollector<WatchEvent>();
    ok(await reader.get(`${base}/0`, deleted.push));
    ok(await writer.delete(`${base}/0`, ANY_VERSION));
    assert.deepEqual(await deleted.waitFor(1, harness().eventWaitMs), [
      { type: 'deleted', path: `${base}/0` },
    ]);
  });

  it('applies nothing of a multi whose check fails', async () => {
    const s = await open();
    const base = harness().freshPath();
    ok(await s.create(base, bytes('')));
    ok(await s.create(`${base}/controller_epoch`, bytes('1')));
    ok(await s.set(`${base}/controller_epoch`, bytes('2'), 0));
    ok(await s.create(`${base}/state`, bytes('old')));
    const result = await s.multi([
      { op: 'set', path: `${base}/state`, data: bytes('new'), version: 0 },
      { op: 'create', path: `${base}/created`, data: bytes(''), mode: 'persistent' },
      { op: 'check', path: `${base}/controller_epoch`, version: 0 },
    ]);
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.code, 'BADVERSION');
    assert.equal(!result.ok && result.failedOpIndex, 2);
    const state = ok(await s.get(`${base}/state`));
    assert.equal(text(state.data), 'old');
    assert.equal(state.stat.version, 0);
    assert.equal(ok(await s.exists(`${base}/created`)), null);
  });

  it('applies a fenced multi atomically and answers each operation', async () => {
    const s = await open();
    const base = harness().freshPath();
    ok(await s.create(base, bytes('')));
    ok(await s.create(`${base}/controller_epoch`, bytes('1')));
    ok(await s.create(`${base}/state`, bytes('old')));
    const result = ok(
      await s.multi([
        { op: 'check', path: `${base}/controller_epoch`, version: 0 },
        { op: 'set', path: `${base}/state`, data: bytes('new'), version: 0 },
        { op: 'create', path: `${base}/t`, data: bytes(''), mode: 'persistent' },
        { op: 'create', path: `${base}/t/p`, data: bytes('x'), mode: 'persistent' },
        { op: 'create', path: `${base}/seq-`, data: bytes(''), mode: 'persistent_sequential' },
        { op: 'delete', path: `${base}/t/p`, version: 0 },
      ]),
    );
    assert.equal(result.length, 6);
    assert.deepEqual(result[0], { op: 'check' });
    assert.equal(result[1]?.op === 'set' && result[1].stat.version, 1);
    assert.deepEqual(result[2], { op: 'create', path: `${base}/t` });
    assert.match(result[4]?.op === 'create' ? result[4].path : '', /\/seq-\d{10}$/);
    assert.deepEqual(result[5], { op: 'delete' });
    assert.equal(text(ok(await s.get(`${base}/state`)).data), 'new');
    assert.deepEqual(ok(await s.children(`${base}/t`)), []);
    const stats = [ok(await s.exists(`${base}/t`))!, ok(await s.exists(`${base}/state`))!];
    assert.equal(stats[0]!.czxid, stats[1]!.mzxid, 'one transaction, one zxid');
  });

  it('fires a child watch with deleted when the watched node itself goes', async () => {
    const s = await open();
    const base = harness().freshPath();
    ok(await s.create(base, bytes('')));
    const events = new EventCollector<WatchEvent>();
    ok(await s.children(base, events.push));
    ok(await s.delete(base, 0));
    assert.deepEqual(await events.waitFor(1, harness().eventWaitMs), [{ type: 'deleted', path: base }]);
  });

  it('names the failing operation of a multi and leaves earlier ones unapplied', async () => {
    const s = await open();
    const base = harness().freshPath();
    ok(await s.create(base, bytes('')));
    ok(await s.create(`${base}/taken`, bytes('')));
    const result = await s.multi([
      { op: 'create', path: `${base}/new`, data: bytes(''), mode: 'persistent' },
      { op: 'create', path: `${base}/taken`, data: bytes(''), mode: 'persistent' },
      { op: 'delete', path: `${base}/taken`, version: ANY_VERSION },
    ]);
    assert.equal(!result.ok && result.code, 'NODEEXISTS');
    assert.equal(!result.ok && result.failedOpIndex, 1);
    assert.deepEqual(ok(await s.children(base)), ['taken']);
    assert.equal(ok(await s.exists(base))?.cversion, 1, 'the parent child version did not move');
  });

  it("lists ZooKeeper's own node under the root, as a real server does", async () => {
    const s = await open();
    assert.ok(ok(await s.children('/')).includes('zookeeper'));
    assert.deepEqual(ok(await s.children('/zookeeper')), ['config', 'quota']);
  });

  it('answers an empty multi with no results', async () => {
    const s = await open();
    assert.deepEqual(await s.multi([]), { ok: true, value: [] });
  });
}
