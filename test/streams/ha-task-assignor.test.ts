// Kafka's HighAvailabilityTaskAssignor rules (runtime/ha-task-assignor.ts) on the pure placement function:
// balance by thread count (uneven capacities), caught-up clients preferred with warm-ups bounded by
// max.warmup.replicas, caught-up standbys swapped in, stateless tasks balanced on their own, standbys on the
// least loaded clients, probing rebalances converging to the balanced plan, and invariants over seeded random
// cases.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  assignTasks,
  type ClientAssignment,
  type ClientState,
  type HighAvailability,
} from '../../src/streams/runtime/task-assignment.js';

const END = 1000;

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

/** Every changelog ends at END; a client's lag is what its offset sum lacks (all of it without state). */
function ha(o: Partial<HighAvailability> = {}): HighAvailability {
  return {
    acceptableRecoveryLag: 100,
    maxWarmupReplicas: 2,
    lag: (c, task) => Math.max(0, END - (c.taskOffsetSums.get(task) ?? 0)),
    ...o,
  };
}

const tasks = (st: number, n: number): string[] => Array.from({ length: n }, (_, p) => `${st}_${p}`);
const counts = (plan: Map<string, ClientAssignment>): Record<string, number> =>
  Object.fromEntries([...plan].map(([id, a]) => [id, a.active.length]));

test('fresh clients: stateful actives balanced by thread count, whatever the capacities', () => {
  const clients = [client('a'), client('b', { capacity: 2 }), client('c', { capacity: 3 })];
  assert.deepEqual(counts(assignTasks(clients, tasks(0, 12), 0, ha())), { a: 2, b: 4, c: 6 });
  // 7 tasks on 1 + 2 threads: the round-robin gives a 4 and b 3; one moves (a 3 per thread, b 2), a second
  // would reverse the skew (a 2, b 2.5), so it stays.
  assert.deepEqual(counts(assignTasks([client('a'), client('b', { capacity: 2 })], tasks(0, 7), 0, ha())), {
    a: 3,
    b: 4,
  });
  // Round-robin in task id order over process ids: equal clients take alternate tasks.
  const even = assignTasks([client('b'), client('a')], tasks(0, 4), 0, ha());
  assert.deepEqual(even.get('a')!.active, ['0_0', '0_2']);
  assert.deepEqual(even.get('b')!.active, ['0_1', '0_3']);
});

test('a client that ran a task is caught up: the task stays, the planned client gets a warm-up', () => {
  const a = client('a', { prevActive: new Set(tasks(0, 4)) });
  const plan = assignTasks([a, client('b')], tasks(0, 4), 0, ha());
  assert.deepEqual(plan.get('a')!.active, tasks(0, 4));
  assert.deepEqual(plan.get('b')!.active, []);
  assert.deepEqual(plan.get('b')!.warmup, ['0_1', '0_3'], 'the tasks the balance gives b');
  assert.deepEqual(plan.get('b')!.standby, ['0_1', '0_3']);
  // max.warmup.replicas bounds them over the whole application.
  const one = assignTasks([a, client('b')], tasks(0, 4), 0, ha({ maxWarmupReplicas: 1 }));
  assert.deepEqual(one.get('b')!.warmup, ['0_1']);
  const many = assignTasks(
    [client('a', { prevActive: new Set(tasks(0, 10)) }), client('b'), client('c'), client('d')],
    tasks(0, 10),
    0,
    ha({ maxWarmupReplicas: 3 }),
  );
  assert.equal(many.get('a')!.active.length, 10);
  assert.equal(
    [...many.values()].reduce((n, x) => n + x.warmup.length, 0),
    3,
  );
});

test('a client within acceptable.recovery.lag is caught up and takes its planned tasks at once', () => {
  const a = client('a', { prevActive: new Set(tasks(0, 4)) });
  const b = client('b', {
    taskOffsetSums: new Map([
      ['0_1', 950],
      ['0_3', 920],
    ]),
  });
  const plan = assignTasks([a, b], tasks(0, 4), 0, ha());
  assert.deepEqual(plan.get('a')!.active, ['0_0', '0_2']);
  assert.deepEqual(plan.get('b')!.active, ['0_1', '0_3']);
  assert.deepEqual(plan.get('b')!.warmup, []);
  // With 60 accepted, 0_3 (80 behind) stays on a and b warms it up.
  const strict = assignTasks([a, b], tasks(0, 4), 0, ha({ acceptableRecoveryLag: 60 }));
  assert.deepEqual(strict.get('b')!.active, ['0_1']);
  assert.deepEqual(strict.get('b')!.warmup, ['0_3']);
  // No client caught up (the owner is gone): the balance decides, with no warm-up.
  const orphan = assignTasks([client('c'), client('d')], tasks(0, 2), 0, ha());
  assert.deepEqual(counts(orphan), { c: 1, d: 1 });
  assert.deepEqual(
    [...orphan.values()].flatMap((x) => x.warmup),
    [],
  );
});

test('a caught-up standby swaps with the planned client instead of a warm-up', () => {
  // a ran everything; c kept caught-up standbys of everything; b is new. One standby replica each.
  const all = tasks(0, 6);
  const a = client('a', { prevActive: new Set(all) });
  const c = client('c', { prevStandby: new Set(all), taskOffsetSums: new Map(all.map((t) => [t, END])) });
  const plan = assignTasks([a, client('b'), c], all, 1, ha({ maxWarmupReplicas: 1 }));
  for (const t of all) {
    const owner = [...plan].find(([, x]) => x.active.includes(t))![0];
    assert.notEqual(owner, 'b', `${t} is active on a caught-up client`);
  }
  // The tasks planned for b swap with the caught-up standbys (a's and c's), so c ends with three actives and b
  // with none; b's standbys, not caught up, move to caught-up clients too, and b keeps one as its only warm-up.
  assert.deepEqual(plan.get('b')!.active, []);
  assert.equal(plan.get('c')!.active.length, 3);
  assert.equal(plan.get('b')!.warmup.length, 1);
  for (const t of all) {
    const hot = [...plan.values()].filter((x) => x.standby.includes(t) && !x.warmup.includes(t));
    assert.equal(hot.length, 1, `${t} keeps num.standby.replicas standbys`);
  }
  for (const [id, x] of plan)
    for (const t of x.standby) assert.ok(!x.active.includes(t), `${id} holds ${t} twice`);
});

test('stateless tasks are balanced on their own, by active tasks per thread', () => {
  // a keeps its four stateful tasks (b is not caught up), so b gets every stateless task.
  const a = client('a', { prevActive: new Set(tasks(0, 4)) });
  const plan = assignTasks(
    [a, client('b')],
    [...tasks(0, 4), ...tasks(1, 4)],
    0,
    ha({ stateful: new Set(tasks(0, 4)) }),
  );
  assert.deepEqual(plan.get('a')!.active, tasks(0, 4));
  assert.deepEqual(plan.get('b')!.active, tasks(1, 4));
  // Uneven capacities: 1 and 3 threads share 8 stateless tasks 2 : 6; stateless tasks get no standby or warm-up.
  const none = assignTasks(
    [client('a'), client('b', { capacity: 3 })],
    tasks(1, 8),
    1,
    ha({ stateful: new Set() }),
  );
  assert.deepEqual(counts(none), { a: 2, b: 6 });
  assert.deepEqual(
    [...none.values()].flatMap((x) => x.standby),
    [],
  );
});

test('standbys go to the least loaded clients that do not hold the task', () => {
  // Actives a: 0_0 0_3, b: 0_1, c (2 threads): 0_2 ... after the balance; then each standby to the lowest
  // (active + standby) per thread.
  const clients = [client('a'), client('b'), client('c', { capacity: 2 })];
  const plan = assignTasks(clients, tasks(0, 4), 1, ha());
  const load = (id: string) => {
    const x = plan.get(id)!;
    return (x.active.length + x.standby.length) / clients.find((c) => c.processId === id)!.capacity;
  };
  for (const t of tasks(0, 4)) {
    const holders = [...plan].filter(([, x]) => x.active.includes(t) || x.standby.includes(t));
    assert.equal(holders.length, 2, `${t}: one active and one standby on two clients`);
  }
  // Balanced: 8 copies over 4 threads, 2 per thread.
  assert.deepEqual([load('a'), load('b'), load('c')], [2, 2, 2]);
  // Two replicas on three clients: every client holds every task once.
  const full = assignTasks(clients, tasks(0, 4), 2, ha());
  for (const x of full.values()) assert.equal(x.active.length + x.standby.length, 4);
});

/** The next generation's client states after the warm-ups caught up (the probing rebalance finds them so). */
function afterProbing(clients: ClientState[], plan: Map<string, ClientAssignment>): ClientState[] {
  return clients.map((c) => {
    const x = plan.get(c.processId)!;
    return {
      ...c,
      prevActive: new Set(x.active),
      prevStandby: new Set(x.standby),
      taskOffsetSums: new Map([...x.active, ...x.standby].map((t) => [t, END])),
    };
  });
}

test('probing rebalances converge on the balanced plan, max.warmup.replicas tasks at a time', () => {
  const all = tasks(0, 12);
  let clients = [
    client('a', { prevActive: new Set(all), taskOffsetSums: new Map(all.map((t) => [t, END])) }),
    client('b', { capacity: 2 }),
    client('c', { capacity: 3 }),
  ];
  const rounds: number[] = [];
  for (let round = 0; round < 10; round++) {
    const plan = assignTasks(clients, all, 0, ha());
    const warmups = [...plan.values()].reduce((n, x) => n + x.warmup.length, 0);
    assert.ok(warmups <= 2);
    rounds.push(warmups);
    if (warmups === 0) {
      assert.deepEqual(counts(plan), { a: 2, b: 4, c: 6 });
      break;
    }
    clients = afterProbing(clients, plan);
  }
  assert.equal(rounds.at(-1), 0, `converged (warm-ups per round: ${rounds.join(',')})`);
  // 10 tasks leave a, two per probing rebalance: five rounds with warm-ups, then the balanced one.
  assert.deepEqual(rounds, [2, 2, 2, 2, 2, 0]);
});

/** A small deterministic generator (mulberry32) for the random cases. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('invariants over 300 seeded random cases', () => {
  for (let seed = 1; seed <= 300; seed++) {
    const rnd = random(seed);
    const n = 1 + Math.floor(rnd() * 5);
    const all = [...tasks(0, 1 + Math.floor(rnd() * 8)), ...tasks(1, Math.floor(rnd() * 6))];
    const stateful = new Set(all.filter((t) => t.startsWith('0_')));
    const clients = Array.from({ length: n }, (_, i) => {
      const c = client(`p${i}`, { capacity: 1 + Math.floor(rnd() * 3) });
      for (const t of all) {
        const r = rnd();
        if (r < 0.2) c.prevActive.add(t);
        else if (r < 0.4) c.prevStandby.add(t);
        if (r < 0.5) c.taskOffsetSums.set(t, Math.floor(rnd() * END));
      }
      return c;
    });
    const replicas = Math.floor(rnd() * 3);
    const maxWarmupReplicas = 1 + Math.floor(rnd() * 3);
    const opts = ha({ maxWarmupReplicas, stateful });
    const plan = assignTasks(clients, all, replicas, opts);
    const where = `seed ${seed}`;
    for (const t of all)
      assert.equal(
        [...plan.values()].filter((x) => x.active.includes(t)).length,
        1,
        `${where}: ${t} active once`,
      );
    for (const [id, x] of plan) {
      for (const t of x.standby) {
        assert.ok(!x.active.includes(t), `${where}: ${id} holds ${t} twice`);
        assert.ok(stateful.has(t), `${where}: standby of stateless ${t}`);
      }
      for (const t of x.warmup) assert.ok(x.standby.includes(t), `${where}: warm-up ${t} is a standby`);
    }
    assert.ok([...plan.values()].reduce((k, x) => k + x.warmup.length, 0) <= maxWarmupReplicas, where);
    const caughtUp = (c: ClientState, t: string) =>
      c.prevActive.has(t) || opts.lag(c, t) <= opts.acceptableRecoveryLag;
    for (const t of stateful) {
      const owner = clients.find((c) => plan.get(c.processId)!.active.includes(t))!;
      if (clients.some((c) => caughtUp(c, t)))
        assert.ok(caughtUp(owner, t), `${where}: ${t} active on ${owner.processId}, not caught up`);
      const standbys = [...plan.values()].filter(
        (x) => x.standby.includes(t) && !x.warmup.includes(t),
      ).length;
      assert.equal(standbys, Math.min(replicas, n - 1), `${where}: ${t} has ${standbys} standbys`);
    }
  }
});
