// Kafka's ClientTagAwareStandbyTaskAssignor (KIP-708) without a broker: the scenarios of Kafka's own tests
// (partial rack awareness over zone and cluster, clients at capacity, tags not in rack.aware.assignment.tags
// ignored, values shared by two tag keys, the fallback to the least loaded clients, too few clients), and 300
// seeded cases through the whole high-availability placement in which every task's holders span as many zones
// as there are replicas (or zones), standbys are balanced only between clients with equal tags, and no client
// holds a task twice.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  assignClientTagAwareStandbys,
  type TaggedPlan,
} from '../../src/streams/runtime/tag-standby-assignor.js';
import { assignTasks, type ClientState } from '../../src/streams/runtime/task-assignment.js';
import { seeded } from './streams-helpers.js';

function plan(id: string, capacity: number, tags: Record<string, string>, ...active: string[]): TaggedPlan {
  return { client: { processId: id, capacity, tags }, active: new Set(active), standby: new Set() };
}
const holders = (plans: TaggedPlan[], task: string) =>
  plans
    .filter((p) => p.standby.has(task))
    .map((p) => p.client.processId)
    .sort();
const standbys = (plans: TaggedPlan[]) => plans.reduce((n, p) => n + p.standby.size, 0);
const z = (zone: string, cluster: string) => ({ zone, cluster });

describe("Kafka's ClientTagAwareStandbyTaskAssignor", () => {
  it('partial rack awareness: the first standby off both zone and cluster, the second off the zone only', () => {
    const plans = [
      plan('p1', 1, z('z1', 'c1'), '0_0'),
      plan('p2', 1, z('z2', 'c1')),
      plan('p3', 1, z('z3', 'c1')),
      plan('p4', 1, z('z1', 'c2')),
      plan('p5', 1, z('z2', 'c2')),
      plan('p6', 1, z('z3', 'c2'), '1_0'),
    ];
    assignClientTagAwareStandbys(plans, ['0_0', '1_0'], 2, ['cluster', 'zone']);
    assert.equal(standbys(plans), 4);
    // 0_0 (z1, c1): p5 is on another zone and cluster; then p3 or p6 on the third zone.
    assert.ok(['p3,p5', 'p5,p6'].includes(holders(plans, '0_0').join()), holders(plans, '0_0').join());
    // 1_0 (z3, c2): p2; then p1 or p4.
    assert.ok(['p1,p2', 'p2,p4'].includes(holders(plans, '1_0').join()), holders(plans, '1_0').join());
  });

  it('clients at capacity still get standbys on other zones', () => {
    const plans = [
      plan('p1', 1, z('z1', 'c1'), '0_0'),
      plan('p2', 1, z('z2', 'c1'), '0_1'),
      plan('p3', 1, z('z3', 'c1'), '0_2'),
      plan('p4', 1, z('z1', 'c1'), '1_0'),
      plan('p5', 1, z('z2', 'c1'), '1_1'),
      plan('p6', 1, z('z3', 'c1'), '1_2'),
    ];
    assignClientTagAwareStandbys(plans, ['0_0', '0_1', '0_2', '1_0', '1_1', '1_2'], 1, ['zone', 'cluster']);
    for (const p of plans) assert.equal(p.standby.size, 1, p.client.processId);
    const zoneOf = new Map(plans.map((p) => [p.client.processId, p.client.tags!.zone]));
    for (const p of plans)
      for (const task of p.active)
        assert.notEqual(zoneOf.get(holders(plans, task)[0]!), p.client.tags!.zone, `${task}'s standby zone`);
  });

  it('tags not named in rack.aware.assignment.tags are ignored; equal values under two keys are distinct', () => {
    const plans = [
      plan('p1', 1, z('z1', 'c1'), '0_0'),
      plan('p2', 2, z('z2', 'c1')),
      plan('p3', 1, z('z1', 'c2')),
    ];
    assignClientTagAwareStandbys(plans, ['0_0'], 1, ['cluster']);
    assert.deepEqual(holders(plans, '0_0'), ['p3'], 'only the cluster counts, though p2 is less loaded');
    const overlap = [plan('p1', 2, z('z1', 'c1'), '0_0'), plan('p2', 2, { zone: 'c1', cluster: 'c3' })];
    assignClientTagAwareStandbys(overlap, ['0_0'], 1, ['zone', 'cluster']);
    assert.deepEqual(holders(overlap, '0_0'), ['p2']);
  });

  it('no client on other tag values: the least loaded clients (a warning when tags exclude every client)', () => {
    // Every client on the same values: each tag is spread as far as it goes, so the load alone decides.
    const plans = [
      plan('p1', 3, z('z1', 'c1'), '0_0'),
      plan('p2', 3, z('z1', 'c1'), '0_1'),
      plan('p3', 3, z('z1', 'c1'), '0_2'),
      plan('p4', 3, z('z1', 'c1'), '1_0'),
    ];
    assert.deepEqual(
      assignClientTagAwareStandbys(plans, ['0_0', '0_1', '0_2', '1_0'], 1, ['cluster', 'zone']),
      [],
    );
    assert.deepEqual(
      plans.map((p) => p.standby.size),
      [1, 1, 1, 1],
    );
    // p2 shares the zone, p3 the cluster: no client differs on both, so the least loaded one takes it.
    const crossed = [
      plan('p1', 1, z('z1', 'c1'), '0_0'),
      plan('p2', 1, z('z1', 'c2')),
      plan('p3', 1, z('z2', 'c1')),
    ];
    const warnings = assignClientTagAwareStandbys(crossed, ['0_0'], 1, ['cluster', 'zone']);
    assert.deepEqual(holders(crossed, '0_0'), ['p2']);
    assert.match(warnings.join(), /not able to assign 1 of 1 standby tasks for the active task \[0_0\]/);
    const alone = [plan('p1', 3, z('z1', 'c1'), '0_0')];
    const w = assignClientTagAwareStandbys(alone, ['0_0'], 1, ['cluster', 'zone']);
    assert.equal(standbys(alone), 0);
    assert.ok(w.some((line) => /Unable to assign 1 of 1 standby tasks for task \[0_0\]/.test(line)));
  });
});

describe('client tags in the high-availability placement', () => {
  it('over 300 seeded cases every task spans min(replicas + 1, zones) zones, moves only between equal tags', () => {
    const random = seeded(708);
    for (let n = 0; n < 300; n++) {
      const zones = 1 + Math.floor(random() * 4);
      const clients: ClientState[] = Array.from({ length: 2 + Math.floor(random() * 6) }, (_, i) => ({
        processId: `c${String(i).padStart(2, '0')}`,
        capacity: 1 + Math.floor(random() * 3),
        prevActive: new Set(),
        prevStandby: new Set(),
        taskOffsetSums: new Map(),
        tags: { zone: `z${Math.floor(random() * zones)}`, host: `h${i}` },
      }));
      const tasks = Array.from({ length: 1 + Math.floor(random() * 12) }, (_, i) => `${i % 3}_${i}`);
      const replicas = 1 + Math.floor(random() * 2);
      const plan = assignTasks(
        clients,
        tasks,
        replicas,
        { acceptableRecoveryLag: 0, maxWarmupReplicas: 0, lag: () => 0 },
        ['zone'],
      );
      const zoneOf = new Map(clients.map((c) => [c.processId, c.tags!.zone!]));
      const usedZones = new Set(clients.map((c) => c.tags!.zone));
      for (const task of tasks) {
        const holding = [...plan].filter(([, a]) => a.active.includes(task) || a.standby.includes(task));
        const owners = holding.map(([id]) => id);
        assert.equal(new Set(owners).size, owners.length, `case ${n}: ${task} held twice`);
        for (const [id, a] of holding)
          assert.ok(
            !(a.active.includes(task) && a.standby.includes(task)),
            `case ${n}: ${id} holds ${task} twice`,
          );
        assert.equal(owners.length, Math.min(replicas + 1, clients.length), `case ${n}: ${task}'s copies`);
        assert.equal(
          new Set(owners.map((id) => zoneOf.get(id))).size,
          Math.min(replicas + 1, usedZones.size),
          `case ${n}: ${task} held in zones ${owners.map((id) => zoneOf.get(id)).join(',')}`,
        );
      }
    }
  });
});
