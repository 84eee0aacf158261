// The streams assignor's placement (runtime/task-assignment.ts) and user data (runtime/streams-assignor.ts)
// without a broker: sticky actives, balance by thread count, standbys never on the active's client and placed
// where state already is, members of a client keeping their tasks, unreadable user data refused.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  decodeAssignmentInfo,
  decodeSubscriptionInfo,
  encodeInfo,
} from '../../src/streams/runtime/streams-assignor.js';
import {
  assignTasks,
  type ClientState,
  spreadOverMembers,
} from '../../src/streams/runtime/task-assignment.js';

function client(processId: string, o: Partial<ClientState> = {}): ClientState {
  return {
    processId,
    capacity: 1,
    prevActive: new Set(),
    prevStandby: new Set(),
    taskOffsetSums: new Map(),
    ...o,
  };
}

const TASKS = ['0_0', '0_1', '0_2', '0_3', '1_0', '1_1'];

test('active tasks stay where they ran while the client is within its share', () => {
  const a = client('a', { prevActive: new Set(['0_0', '0_1', '1_0']) });
  const b = client('b', { prevActive: new Set(['0_2', '0_3', '1_1']) });
  const plan = assignTasks([b, a], TASKS, 0);
  assert.deepEqual(plan.get('a')!.active, ['0_0', '0_1', '1_0']);
  assert.deepEqual(plan.get('b')!.active, ['0_2', '0_3', '1_1']);
  assert.deepEqual(plan.get('a')!.standby, []);
});

test('a new client takes its share of every sub-topology; the rest stay put', () => {
  const a = client('a', { prevActive: new Set(TASKS) });
  const plan = assignTasks([a, client('b')], TASKS, 0);
  assert.deepEqual(plan.get('a')!.active, ['0_0', '0_1', '1_0']);
  assert.deepEqual(plan.get('b')!.active, ['0_2', '0_3', '1_1']);
  // Shares follow thread counts.
  const big = assignTasks([client('a'), client('b', { capacity: 2 })], TASKS, 0);
  assert.equal(big.get('b')!.active.length, 4);
  assert.equal(big.get('a')!.active.length, 2);
});

test('standbys go to other clients, preferring the one with the state; failover goes to the standby', () => {
  const a = client('a', { prevActive: new Set(['0_0', '0_1']) });
  const b = client('b', { prevActive: new Set(['0_2', '0_3']) });
  const c = client('c', { taskOffsetSums: new Map([['0_0', 500]]) });
  const plan = assignTasks([a, b, c], ['0_0', '0_1', '0_2', '0_3'], 1);
  for (const [id, x] of plan) {
    for (const t of x.standby) assert.ok(!x.active.includes(t), `${id} holds ${t} twice`);
  }
  const holders = (t: string) => [...plan].filter(([, x]) => x.standby.includes(t)).map(([id]) => id);
  for (const t of ['0_0', '0_1', '0_2', '0_3']) assert.equal(holders(t).length, 1, t);
  assert.deepEqual(holders('0_0'), ['c'], 'the client with state for 0_0 gets its standby');

  // a is gone: its tasks go to the clients that hold their state (standby or leftovers on disk).
  const bAfter = client('b', { prevActive: new Set(['0_2', '0_3']), prevStandby: new Set(['0_1']) });
  const cAfter = client('c', { prevStandby: new Set(['0_0']), taskOffsetSums: new Map([['0_0', 500]]) });
  const failover = assignTasks([bAfter, cAfter], ['0_0', '0_1', '0_2', '0_3'], 1);
  assert.ok(failover.get('c')!.active.includes('0_0'));
  assert.deepEqual([...failover.get('b')!.active, ...failover.get('c')!.active].sort(), [
    '0_0',
    '0_1',
    '0_2',
    '0_3',
  ]);
  // One client only: no standby can be placed, every task is still active somewhere.
  const alone = assignTasks([client('x')], TASKS, 2);
  assert.deepEqual(alone.get('x')!.standby, []);
  assert.equal(alone.get('x')!.active.length, TASKS.length);
});

test('a client spreads its tasks over its threads, keeping each thread its tasks', () => {
  const out = spreadOverMembers(
    ['0_0', '0_1', '0_2', '0_3'],
    [
      { memberId: 'm1', prev: new Set(['0_3']) },
      { memberId: 'm2', prev: new Set(['0_0']) },
    ],
  );
  assert.ok(out.get('m1')!.includes('0_3'));
  assert.ok(out.get('m2')!.includes('0_0'));
  assert.equal(out.get('m1')!.length, 2);
  assert.equal(out.get('m2')!.length, 2);
});

test('user data round-trips; foreign or broken bytes read as none', () => {
  const sub = {
    version: 1,
    processId: 'p1',
    userEndpoint: 'localhost:1',
    prevTasks: ['0_1'],
    standbyTasks: ['0_0'],
    taskOffsetSums: { '0_0': 12 },
    errorCode: 0,
    clientTags: { zone: 'z1' },
  };
  assert.deepEqual(decodeSubscriptionInfo(encodeInfo(sub)), sub);
  const info = {
    version: 1,
    activeTasks: ['0_1'],
    standbyTasks: [],
    partitionsByHost: { 'h:1': [['t', 1]] as [string, number][] },
    standbyPartitionsByHost: {},
    errCode: 0,
  };
  assert.deepEqual(decodeAssignmentInfo(encodeInfo(info)), info);
  assert.equal(decodeSubscriptionInfo(Buffer.from('{"version":9,"processId":"x","prevTasks":[]}')), null);
  assert.equal(decodeSubscriptionInfo(Buffer.from([0, 1, 2])), null);
  assert.equal(decodeAssignmentInfo(null), null);
});

test('KIP-441: a lagging client gets warm-ups, not actives; a caught-up one takes them; no one caught up moves at once', () => {
  const end = 1000;
  const ha = (acceptableRecoveryLag: number, maxWarmupReplicas: number) => ({
    acceptableRecoveryLag,
    maxWarmupReplicas,
    lag: (c: ClientState, task: string) => Math.max(0, end - (c.taskOffsetSums.get(task) ?? 0)),
  });
  const a = client('a', { prevActive: new Set(['0_0', '0_1', '0_2', '0_3']) });
  const fresh = client('b');
  const lagging = assignTasks([a, fresh], ['0_0', '0_1', '0_2', '0_3'], 0, ha(100, 1));
  assert.deepEqual(lagging.get('a')!.active, ['0_0', '0_1', '0_2', '0_3'], 'the owner keeps them');
  assert.equal(lagging.get('b')!.warmup.length, 1, 'max.warmup.replicas bounds the warm-ups');
  assert.deepEqual(lagging.get('b')!.standby, lagging.get('b')!.warmup);
  // Caught up (within the acceptable lag) on two tasks: the one the balance plans for b moves now, the other
  // planned one (0_1) is warmed up first (Kafka's HighAvailabilityTaskAssignor plans 0_1 and 0_3 for b).
  const warm = client('b', {
    taskOffsetSums: new Map([
      ['0_2', 950],
      ['0_3', 990],
    ]),
  });
  const moved = assignTasks([a, warm], ['0_0', '0_1', '0_2', '0_3'], 0, ha(100, 2));
  assert.deepEqual(moved.get('b')!.active, ['0_3']);
  assert.deepEqual(moved.get('b')!.warmup, ['0_1']);
  // The owner is gone and no one is caught up: the balance decides at once, with no warm-up.
  const orphan = assignTasks([fresh, client('c')], ['0_0', '0_1'], 0, ha(100, 2));
  assert.deepEqual([...orphan.values()].flatMap((x) => x.active).sort(), ['0_0', '0_1']);
  assert.deepEqual(
    [...orphan.values()].flatMap((x) => x.warmup),
    [],
  );
});

test('rack.aware.assignment.tags: a standby goes to a client of another zone when there is one', () => {
  const zone = (processId: string, z: string, prev: string[]) =>
    client(processId, { prevActive: new Set(prev), tags: { zone: z } });
  const clients = [zone('a', 'z1', ['0_0']), zone('b', 'z1', ['0_1']), zone('c', 'z2', ['0_2'])];
  const plan = assignTasks(clients, ['0_0', '0_1', '0_2'], 1, null, ['zone']);
  assert.deepEqual(plan.get('c')!.standby, ['0_0', '0_1'], "a's and b's tasks keep a copy in z2");
  assert.equal(plan.get('a')!.standby.length + plan.get('b')!.standby.length, 1);
  // Without the tags the standbys go by load alone, and a zone may hold a task's only copies.
  const plain = assignTasks(clients, ['0_0', '0_1', '0_2'], 1);
  assert.notDeepEqual(plain.get('c')!.standby, ['0_0', '0_1']);
});
