// Kafka Streams' HighAvailabilityTaskAssignor (KIP-441), the placement the group leader uses whenever it could
// read the changelog end offsets (task-assignment.ts falls back to the sticky placement otherwise, as Kafka
// falls back to its prior-assignment assignor). Pure: no I/O, one call per rebalance.
//
// The rules, in Kafka's order (each step sees the result of the previous ones; clients are taken in process id
// order and ties always go to the smaller process id):
//  1. Stateful active tasks, in task id order, round-robin over the clients; then balanced over threads: while
//     moving a task from one client to another lowers the difference of their tasks per thread (without
//     reversing it), the first task (id order) the destination does not hold moves. Capacity = thread count.
//  2. num.standby.replicas standbys of each stateful task, each on the client with the lowest load
//     ((active + standby) / threads) that does not hold the task yet; then balanced over threads as in 1.
//     With rack.aware.assignment.tags, Kafka's ClientTagAwareStandbyTaskAssignor places them instead
//     (tag-standby-assignor.ts: clients on tag values the task's holders do not use first), and the
//     thread balancing moves a standby only between clients with equal tags, as Kafka's isAllowedTaskMovement.
//  3. Active task movements: a client is caught up on a task when it ran it as active in the previous
//     generation or its state lags the changelog by at most acceptable.recovery.lag. An active task placed on a
//     client that is not caught up, while some client is, moves: tasks with the fewest caught-up clients first,
//     then by id. It goes to the least loaded caught-up client holding a standby of it (the two swap: that
//     client's standby becomes the active and the planned client gets a standby), else to the least loaded
//     caught-up client, and the planned client gets a warm-up replica while max.warmup.replicas allows.
//  4. Standby task movements, the same for standbys (warm-ups of step 3 stay where they are): a standby on a
//     client that is not caught up moves to the least loaded caught-up client not holding the task, and the
//     planned client keeps a warm-up while max.warmup.replicas (shared with step 3) allows.
//  5. Stateless active tasks, in id order, each to the client with the fewest active tasks per thread.
// With rack.aware.assignment.strategy (KIP-925, rack-aware-task-assignor.ts) the stateful actives are re-placed
// after step 1 and the stateless ones after step 5 to cut cross-rack traffic, each client keeping its count
// (Kafka's costs by default: traffic 10 and non-overlap 1 for stateful tasks, 1 and 0 for stateless ones).
// A probing rebalance is due when step 3 or 4 moved anything: then warm-ups were placed (max.warmup.replicas is
// at least 1), and the streams assignor schedules it from them.

import assert from 'node:assert/strict';
import { DEFAULT_COSTS, optimizeActivePlacement } from './rack-aware-task-assignor.js';
import { assignClientTagAwareStandbys, sameClientTags } from './tag-standby-assignor.js';
import type { ClientAssignment, ClientState, HighAvailability } from './task-assignment.js';

interface Plan {
  client: ClientState;
  active: Set<string>;
  standby: Set<string>;
}

const holds = (p: Plan, task: string): boolean => p.active.has(task) || p.standby.has(task);
const load = (p: Plan): number => (p.active.size + p.standby.size) / p.client.capacity;
const activeLoad = (p: Plan): number => p.active.size / p.client.capacity;

/** The plan with the smallest key among those allowed; the first (smallest process id) on ties. */
function least(plans: Plan[], allowed: (p: Plan) => boolean, key: (p: Plan) => number): Plan | undefined {
  let best: Plan | undefined;
  for (const p of plans) if (allowed(p) && (best === undefined || key(p) < key(best))) best = p;
  return best;
}

/** Kafka's shouldMoveATask: the move lowers the per-thread skew between source and destination, not reversing it. */
function shouldMove(src: Plan, dst: Plan): boolean {
  const skew = load(src) - load(dst);
  if (skew <= 0) return false;
  const after =
    (src.active.size + src.standby.size - 1) / src.client.capacity -
    (dst.active.size + dst.standby.size + 1) / dst.client.capacity;
  return after >= 0 && after < skew;
}

function balanceOverThreads(
  plans: Plan[],
  kind: 'active' | 'standby',
  order: (a: string, b: string) => number,
  allowed: (src: Plan, dst: Plan) => boolean = () => true,
) {
  // Terminates: every move strictly lowers the sum of squared loads (the skew of the pair shrinks).
  let moved = true;
  while (moved) {
    moved = false;
    for (const src of plans) {
      for (const dst of plans) {
        if (src === dst || !allowed(src, dst)) continue;
        for (const task of [...src[kind]].sort(order)) {
          if (!shouldMove(src, dst)) break;
          if (holds(dst, task)) continue;
          src[kind].delete(task);
          dst[kind].add(task);
          moved = true;
        }
      }
    }
  }
}

/** KIP-925: re-places `tasks` (actives) to cut cross-rack traffic, every client keeping its count of them. */
function optimizeForRacks(
  plans: Plan[],
  tasks: string[],
  ha: HighAvailability,
  kind: 'stateful' | 'stateless',
): void {
  const rack = ha.rackAware;
  if (rack === undefined || tasks.length === 0) return;
  const current = new Map<string, string>();
  for (const p of plans) for (const t of tasks) if (p.active.has(t)) current.set(t, p.client.processId);
  const placed = optimizeActivePlacement({
    tasks,
    clients: plans.map((p) => p.client.processId),
    current,
    crossRackPartitions: rack.crossRackPartitions,
    strategy: rack.strategy,
    trafficCost: rack.trafficCost ?? DEFAULT_COSTS[kind].trafficCost,
    nonOverlapCost: rack.nonOverlapCost ?? DEFAULT_COSTS[kind].nonOverlapCost,
  });
  for (const p of plans) {
    for (const t of tasks) {
      if (placed.get(t) === p.client.processId) p.active.add(t);
      else p.active.delete(t);
    }
  }
}

export function assignHighAvailability(
  sorted: ClientState[],
  ordered: string[],
  numStandbyReplicas: number,
  ha: HighAvailability,
  rackAwareTags: string[],
  order: (a: string, b: string) => number,
  log: (line: string) => void = () => {},
): Map<string, ClientAssignment> {
  const plans: Plan[] = sorted.map((client) => ({ client, active: new Set(), standby: new Set() }));
  const stateful = ordered.filter((t) => ha.stateful === undefined || ha.stateful.has(t));
  const stateless = ordered.filter((t) => !stateful.includes(t));

  // 1. Stateful actives: round-robin, then balanced over threads.
  for (const [i, task] of stateful.entries()) plans[i % plans.length]!.active.add(task);
  balanceOverThreads(plans, 'active', order);
  optimizeForRacks(plans, stateful, ha, 'stateful');

  // 2. Standbys: least loaded client not holding the task, or Kafka's client-tag-aware placement.
  if (rackAwareTags.length > 0) {
    for (const line of assignClientTagAwareStandbys(plans, stateful, numStandbyReplicas, rackAwareTags))
      log(line);
    balanceOverThreads(plans, 'standby', order, sameClientTags);
  } else {
    for (const task of stateful) {
      for (let replica = 0; replica < numStandbyReplicas; replica++) {
        const best = least(plans, (p) => !holds(p, task), load);
        // Fewer clients than replicas + 1: Kafka assigns what it can and logs a warning; so does the caller.
        if (best === undefined) break;
        best.standby.add(task);
      }
    }
    balanceOverThreads(plans, 'standby', order);
  }

  // 3 and 4. Movements towards caught-up clients, warm-ups on the planned ones.
  const caughtUp = new Map<string, Plan[]>();
  for (const task of stateful)
    caughtUp.set(
      task,
      plans.filter(
        (p) => p.client.prevActive.has(task) || ha.lag(p.client, task) <= ha.acceptableRecoveryLag,
      ),
    );
  const notCaughtUp = (p: Plan, task: string): boolean => {
    const c = caughtUp.get(task)!;
    return c.length > 0 && !c.includes(p);
  };
  const byFewestCaughtUp = (a: { task: string }, b: { task: string }): number =>
    caughtUp.get(a.task)!.length - caughtUp.get(b.task)!.length || order(a.task, b.task);
  let warmupsLeft = ha.maxWarmupReplicas;
  const warmups = new Map<Plan, Set<string>>(plans.map((p) => [p, new Set()]));

  const activeMoves = plans
    .flatMap((p) => [...p.active].filter((t) => notCaughtUp(p, t)).map((task) => ({ task, dest: p })))
    .sort(byFewestCaughtUp);
  for (const { task, dest } of activeMoves) {
    const candidates = caughtUp.get(task)!;
    const withStandby = least(candidates, (p) => p.standby.has(task), load);
    dest.active.delete(task);
    if (withStandby !== undefined) {
      // The caught-up standby becomes the active; the planned client keeps a standby instead.
      withStandby.standby.delete(task);
      withStandby.active.add(task);
      dest.standby.add(task);
      continue;
    }
    const src = least(candidates, () => true, load);
    assert.ok(src !== undefined, 'a movement has a caught-up client');
    src.active.add(task);
    if (warmupsLeft > 0) {
      warmupsLeft--;
      dest.standby.add(task);
      warmups.get(dest)!.add(task);
    }
  }

  const standbyMoves = plans
    .flatMap((p) =>
      [...p.standby]
        .filter((t) => !warmups.get(p)!.has(t) && notCaughtUp(p, t))
        .map((task) => ({ task, dest: p })),
    )
    .sort(byFewestCaughtUp);
  for (const { task, dest } of standbyMoves) {
    // No caught-up client without a copy: the standby stays where it is (it is already a warm-up in effect).
    const src = least(caughtUp.get(task)!, (p) => !holds(p, task), load);
    if (src === undefined) continue;
    src.standby.add(task);
    if (warmupsLeft > 0) {
      warmupsLeft--;
      warmups.get(dest)!.add(task);
    } else dest.standby.delete(task);
  }

  // 5. Stateless actives: fewest active tasks per thread.
  for (const task of stateless) least(plans, () => true, activeLoad)!.active.add(task);
  optimizeForRacks(plans, stateless, ha, 'stateless');

  return new Map(
    plans.map((p) => [
      p.client.processId,
      {
        active: [...p.active].sort(order),
        standby: [...p.standby].sort(order),
        warmup: [...warmups.get(p)!].sort(order),
      },
    ]),
  );
}
