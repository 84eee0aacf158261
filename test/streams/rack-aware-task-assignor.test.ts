// KIP-925 rack-aware active placement without a broker: the min-cost flow against a brute-force minimum over
// seeded small cases (both strategies), the constraints it keeps (each client's task count; for
// balance_subtopology each client's share of every sub-topology), stability when moving costs and saves nothing,
// and the high-availability placement with and without rack.aware.assignment.strategy.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  optimizeActivePlacement,
  placementCost,
  type RackPlacementInput,
} from '../../src/streams/runtime/rack-aware-task-assignor.js';
import { assignTasks, type ClientState } from '../../src/streams/runtime/task-assignment.js';
import { seeded } from './streams-helpers.js';

const subtopologyOf = (t: string) => t.slice(0, t.indexOf('_'));

/** Every placement keeping each client's count (and the sub-topology shares when `balance`). */
function* placements(input: RackPlacementInput): Generator<Map<string, string>> {
  const counts = new Map(input.clients.map((c) => [c, 0]));
  for (const c of input.current.values()) counts.set(c, counts.get(c)! + 1);
  const subtopologies = new Set(input.tasks.map(subtopologyOf));
  const cap = (client: string, st: string) =>
    Math.ceil(
      (counts.get(client)! / input.tasks.length) * input.tasks.filter((t) => subtopologyOf(t) === st).length,
    );
  const choice = new Array<number>(input.tasks.length).fill(0);
  for (;;) {
    const p = new Map(input.tasks.map((t, i) => [t, input.clients[choice[i]!]!]));
    const used = new Map(input.clients.map((c) => [c, 0]));
    for (const c of p.values()) used.set(c, used.get(c)! + 1);
    let ok = input.clients.every((c) => used.get(c) === counts.get(c));
    if (ok && input.strategy === 'balance_subtopology')
      ok = [...subtopologies].every((st) =>
        input.clients.every(
          (c) => input.tasks.filter((t) => subtopologyOf(t) === st && p.get(t) === c).length <= cap(c, st),
        ),
      );
    if (ok) yield p;
    let i = 0;
    while (i < choice.length && ++choice[i]! === input.clients.length) choice[i++] = 0;
    if (i === choice.length) return;
  }
}

function randomCase(random: () => number, strategy: RackPlacementInput['strategy']): RackPlacementInput {
  const racks = ['r0', 'r1', 'r2'];
  const clients = Array.from({ length: 2 + Math.floor(random() * 2) }, (_, i) => `c${i}`);
  const clientRack = new Map(clients.map((c) => [c, racks[Math.floor(random() * racks.length)]!]));
  const subtopologies = 1 + Math.floor(random() * 3);
  const tasks: string[] = [];
  for (let s = 0; s < subtopologies; s++)
    for (let p = 0, n = 1 + Math.floor(random() * 3); p < n; p++) tasks.push(`${s}_${p}`);
  while (tasks.length > 7) tasks.pop();
  // Each task reads one to three partitions, each with replicas in one or two racks.
  const partitionRacks = new Map(
    tasks.map((t) => [
      t,
      Array.from({ length: 1 + Math.floor(random() * 3) }, () =>
        racks.filter(() => random() < 0.45).concat(racks[Math.floor(random() * 3)]!),
      ),
    ]),
  );
  const current = new Map(tasks.map((t) => [t, clients[Math.floor(random() * clients.length)]!]));
  return {
    tasks,
    clients,
    current,
    crossRackPartitions: (task, client) =>
      partitionRacks.get(task)!.filter((rs) => !rs.includes(clientRack.get(client)!)).length,
    strategy,
    trafficCost: Math.floor(random() * 11),
    nonOverlapCost: Math.floor(random() * 4),
  };
}

describe('rack-aware active placement (min-cost flow)', () => {
  for (const strategy of ['min_traffic', 'balance_subtopology'] as const) {
    it(`${strategy}: equals the brute-force minimum over 300 seeded cases and keeps the counts`, () => {
      const random = seeded(strategy === 'min_traffic' ? 925 : 9250);
      let improved = 0;
      for (let n = 0; n < 300; n++) {
        const input = randomCase(random, strategy);
        const out = optimizeActivePlacement(input);
        let best = Number.POSITIVE_INFINITY;
        for (const p of placements(input)) best = Math.min(best, placementCost(input, p));
        const got = placementCost(input, out);
        assert.equal(got, best, `case ${n}: ${JSON.stringify({ ...input, current: [...input.current] })}`);
        // The result itself is a feasible placement (counts and, for balance_subtopology, the shares).
        assert.ok(
          [...placements(input)].some((p) => [...p].every(([t, c]) => out.get(t) === c)),
          `case ${n}: the placement breaks a count or a share`,
        );
        if (got < placementCost(input, input.current)) improved++;
      }
      assert.ok(improved > 50, `the cases exercise moves (${improved} improved)`);
    });
  }

  it('a move that saves nothing is not made; with trafficCost 0 nothing moves', () => {
    const base: RackPlacementInput = {
      tasks: ['0_0', '0_1'],
      clients: ['a', 'b'],
      current: new Map([
        ['0_0', 'a'],
        ['0_1', 'b'],
      ]),
      // Both tasks are cross-rack everywhere: swapping them saves nothing.
      crossRackPartitions: () => 1,
      strategy: 'min_traffic',
      trafficCost: 10,
      nonOverlapCost: 0,
    };
    assert.deepEqual([...optimizeActivePlacement(base)], [...base.current]);
    const local = {
      ...base,
      crossRackPartitions: (t: string, c: string) => Number((t === '0_0') === (c === 'a')),
    };
    assert.deepEqual(
      [...optimizeActivePlacement(local)],
      [
        ['0_0', 'b'],
        ['0_1', 'a'],
      ],
      'the swap that makes both tasks rack-local',
    );
    assert.deepEqual(
      [...optimizeActivePlacement({ ...local, trafficCost: 0, nonOverlapCost: 1 })],
      [...base.current],
    );
  });

  it('balance_subtopology keeps each client near its share of every sub-topology where min_traffic does not', () => {
    // Clients a (rack ra) and b (rb) run two tasks each, one of each sub-topology. Sub-topology 0 reads partitions
    // in ra, sub-topology 1 partitions in rb.
    const clientRack: Record<string, string> = { a: 'ra', b: 'rb' };
    const input: RackPlacementInput = {
      tasks: ['0_0', '0_1', '1_0', '1_1'],
      clients: ['a', 'b'],
      current: new Map([
        ['0_0', 'a'],
        ['0_1', 'b'],
        ['1_0', 'a'],
        ['1_1', 'b'],
      ]),
      crossRackPartitions: (t, c) => Number((t.startsWith('0_') ? 'ra' : 'rb') !== clientRack[c]),
      strategy: 'min_traffic',
      trafficCost: 10,
      nonOverlapCost: 1,
    };
    // min_traffic: a whole sub-topology per client, every task local (two moves: cost 2).
    const minTraffic = optimizeActivePlacement(input);
    assert.deepEqual([...minTraffic].sort(), [
      ['0_0', 'a'],
      ['0_1', 'a'],
      ['1_0', 'b'],
      ['1_1', 'b'],
    ]);
    assert.equal(placementCost(input, minTraffic), 2);
    // balance_subtopology: each client may hold ceil(2 / 4 * 2) = 1 task of each sub-topology, so the balanced
    // placement (two cross-rack tasks, cost 20) is already the cheapest and stays.
    const balance = { ...input, strategy: 'balance_subtopology' as const };
    assert.deepEqual([...optimizeActivePlacement(balance)], [...input.current]);
  });
});

describe('rack-aware placement in the high-availability assignor', () => {
  // Two clients of one thread each, in racks ra and rb; four stateful tasks whose partitions live in one rack
  // each: 0_0 and 0_2 in rb, 0_1 and 0_3 in ra. Round-robin puts 0_0 and 0_2 on the first client (ra).
  const racks: Record<string, string> = { '0_0': 'rb', '0_1': 'ra', '0_2': 'rb', '0_3': 'ra' };
  const clients = (): ClientState[] =>
    ['p1', 'p2'].map((processId) => ({
      processId,
      capacity: 1,
      prevActive: new Set(),
      prevStandby: new Set(),
      taskOffsetSums: new Map(),
    }));
  const clientRack: Record<string, string> = { p1: 'ra', p2: 'rb' };
  const ha = (strategy: 'min_traffic' | 'balance_subtopology' | null) => ({
    acceptableRecoveryLag: 10_000,
    maxWarmupReplicas: 2,
    lag: () => 0,
    rackAware:
      strategy === null
        ? undefined
        : {
            strategy,
            trafficCost: null,
            nonOverlapCost: null,
            crossRackPartitions: (task: string, processId: string) =>
              Number(racks[task] !== clientRack[processId]),
          },
  });
  const tasks = ['0_0', '0_1', '0_2', '0_3'];

  it('without a strategy the round-robin placement stays, every task cross-rack', () => {
    const out = assignTasks(clients(), tasks, 0, ha(null));
    assert.deepEqual(out.get('p1')!.active, ['0_0', '0_2']);
    assert.deepEqual(out.get('p2')!.active, ['0_1', '0_3']);
  });

  for (const strategy of ['min_traffic', 'balance_subtopology'] as const)
    it(`${strategy}: every task runs in its partitions' rack, two per client`, () => {
      const out = assignTasks(clients(), tasks, 0, ha(strategy));
      assert.deepEqual(out.get('p1')!.active, ['0_1', '0_3']);
      assert.deepEqual(out.get('p2')!.active, ['0_0', '0_2']);
    });
});
