// A seeded differential test: the same random operations, run against the in-process store and a real
// ZooKeeper, must give the same answers (error codes, failing operation, created names, versions, child
// versions, children, data) and fire the same watches. It finds divergences no hand-written case thought of.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { InProcessStore } from '../../../src/controller/store/in-process-store.js';
import type {
  CoordinationStore,
  CreateMode,
  Op,
  Stat,
  Watcher,
} from '../../../src/controller/store/store.js';
import { connectZooKeeper } from '../../../src/controller/store/zookeeper-store.js';
import { startTestZooKeeper, type TestZooKeeper } from '../../helpers/zookeeper.js';

const STEPS = 400;
const SEEDS = [1, 2];

/** xorshift32: small, seeded, the same sequence everywhere. */
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

type Step =
  | { kind: 'op'; session: 0 | 1; op: Op }
  | { kind: 'multi'; session: 0 | 1; ops: Op[] }
  | { kind: 'get' | 'exists' | 'children'; session: 0 | 1; path: string; watch: boolean }
  | { kind: 'reopen' };

function planStep(next: () => number, base: string): Step {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const names = ['a', 'b', 'c'];
  const depth = 1 + Math.floor(next() * 3);
  let path = base;
  for (let i = 0; i < depth; i++) path += `/${pick(names)}`;
  const version = pick([-1, 0, 0, 1, 2]);
  const data = new TextEncoder().encode(pick(['', 'x', 'state']));
  const mode = pick<CreateMode>([
    'persistent',
    'persistent',
    'ephemeral',
    'persistent_sequential',
    'ephemeral_sequential',
  ]);
  const session = next() < 0.5 ? 0 : 1;
  const makeOp = (): Op => {
    const r = next();
    if (r < 0.45) return { op: 'create', path, data, mode };
    if (r < 0.7) return { op: 'set', path, data, version };
    if (r < 0.85) return { op: 'delete', path, version };
    return { op: 'check', path, version };
  };
  const r = next();
  if (r < 0.55) return { kind: 'op', session, op: makeOp() };
  if (r < 0.7)
    return {
      kind: 'multi',
      session,
      ops: [makeOp(), makeOp(), makeOp()].slice(0, 1 + Math.floor(next() * 3)),
    };
  if (r < 0.97) {
    return { kind: pick(['get', 'exists', 'children'] as const), session, path, watch: next() < 0.5 };
  }
  return { kind: 'reopen' };
}

function statView(stat: Stat | null, owners: readonly string[]): unknown {
  if (stat === null) return null;
  return {
    version: stat.version,
    cversion: stat.cversion,
    numChildren: stat.numChildren,
    dataLength: stat.dataLength,
    owner: stat.ephemeralOwner === null ? null : owners.indexOf(stat.ephemeralOwner),
  };
}

/** Runs one step on one store, answering a view of the result that does not depend on the implementation. */
async function run(
  sessions: CoordinationStore[],
  step: Step,
  owners: string[],
  watcherFor: (session: number) => Watcher,
): Promise<unknown> {
  if (step.kind === 'reopen') return 'reopened';
  const s = sessions[step.session]!;
  const watcher =
    step.kind !== 'op' && step.kind !== 'multi' && step.watch ? watcherFor(step.session) : undefined;
  switch (step.kind) {
    case 'op': {
      const r = await s.multi([step.op]);
      return r.ok
        ? r.value.map((v) => (v.op === 'set' ? { op: 'set', stat: statView(v.stat, owners) } : v))
        : r.code;
    }
    case 'multi': {
      const r = await s.multi(step.ops);
      if (!r.ok) return { code: r.code, at: r.failedOpIndex };
      return r.value.map((v) => (v.op === 'set' ? { op: 'set', stat: statView(v.stat, owners) } : v));
    }
    case 'get': {
      const r = await s.get(step.path, watcher);
      return r.ok
        ? { data: new TextDecoder().decode(r.value.data), stat: statView(r.value.stat, owners) }
        : r.code;
    }
    case 'exists': {
      const r = await s.exists(step.path, watcher);
      return r.ok ? statView(r.value, owners) : r.code;
    }
    case 'children': {
      const r = await s.children(step.path, watcher);
      return r.ok ? r.value : r.code;
    }
  }
}

describe('differential: in-process store against a real ZooKeeper', () => {
  let server: TestZooKeeper;
  before(async () => {
    server = await startTestZooKeeper();
  });
  after(async () => {
    await server?.stop();
  });

  for (const seed of SEEDS) {
    it(`gives the same answers for ${STEPS} random operations (seed ${seed})`, async () => {
      const base = `/diff-${seed}`;
      const local = InProcessStore.open({ dataDir: null });
      const connect = async () => {
        const r = await connectZooKeeper({
          connect: server.connect,
          sessionTimeoutMs: 10_000,
          connectionTimeoutMs: 10_000,
        });
        assert.ok(r.ok, 'connects to ZooKeeper');
        return r.value;
      };
      const zkSessions = [await connect(), await connect()];
      const localSessions = [local.openSession(), local.openSession()];
      // Session ids differ between the stores, so owners are compared by their index in this list.
      const zkOwners = zkSessions.map((s) => s.sessionId);
      const localOwners = localSessions.map((s) => s.sessionId);
      const zkEvents: string[] = [];
      const localEvents: string[] = [];
      let watchesFired = 0;
      // A fresh function per registration, so that no store's deduplication of a repeated watcher comes in.
      const recorder =
        (log: string[], session: number): Watcher =>
        (event) => {
          log.push(`${session} ${event.type} ${event.path}`);
          if (log === zkEvents) watchesFired += 1;
        };
      try {
        for (const sessions of [zkSessions, localSessions]) {
          assert.ok((await sessions[0]!.create(base, new Uint8Array())).ok);
        }
        const next = random(seed);
        const recent: string[] = [];
        for (let i = 0; i < STEPS; i++) {
          const step = planStep(next, base);
          recent.push(
            `${i}: ${JSON.stringify(step, (_, v) => (v instanceof Uint8Array ? `${v.length} bytes` : v))}`,
          );
          if (recent.length > 12) recent.shift();
          if (step.kind === 'reopen') {
            // Session 1 ends (its ephemerals go) and a new one takes its place, in both stores.
            await zkSessions[1]!.close();
            await localSessions[1]!.close();
            zkSessions[1] = await connect();
            localSessions[1] = local.openSession();
            zkOwners.push(zkSessions[1].sessionId);
            localOwners.push(localSessions[1].sessionId);
            zkOwners.splice(1, 1);
            localOwners.splice(1, 1);
          }
          const expected = await run(zkSessions, step, zkOwners, (n) => recorder(zkEvents, n));
          const actual = await run(localSessions, step, localOwners, (n) => recorder(localEvents, n));
          assert.deepEqual(actual, expected, `step ${i}: ${JSON.stringify(step)}`);
          // A read on every session after the step: ZooKeeper sends a session its watch events before the
          // answer to any later request, so by then every event this step fired has arrived.
          await Promise.all([...zkSessions, ...localSessions].map((session) => session.exists('/')));
          assert.deepEqual(
            localEvents.splice(0).sort(),
            zkEvents.splice(0).sort(),
            `watches after steps\n${recent.join('\n')}`,
          );
        }
        assert.ok(watchesFired > 5, `the run exercised watches (${watchesFired} fired)`);
      } finally {
        for (const s of zkSessions) await s.close();
        local.close();
      }
    });
  }
});
