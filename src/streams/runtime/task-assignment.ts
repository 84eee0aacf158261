// Which instance runs which task, actively or as a standby: the decision of the group leader's streams assignor
// (streams-assignor.ts), kept free of I/O so it can be read and tested on its own.
//
// Two placements, as in Kafka Streams:
// - With the changelog lags known (the leader read the end offsets), Kafka's HighAvailabilityTaskAssignor
//   (KIP-441): balance by thread count, actives kept on caught-up clients with warm-ups on the planned ones and a
//   probing rebalance later; see ha-task-assignor.ts for its rules.
// - Without them (the end offsets could not be read), a sticky placement, the role of Kafka's fallback to the
//   prior assignment: each client (one process id, one or more stream threads) has a capacity equal to its
//   thread count. An active task stays on the client that ran it in the previous generation while that client
//   is under its fair share, both of all tasks and of the tasks of that sub-topology; a task without a place
//   goes to the client under its shares that holds the most state for it (a standby, or state left on disk),
//   then to the one with the fewest tasks of its sub-topology, then the least loaded. num.standby.replicas
//   standbys of each task go to other clients (never the active's), preferring those that already hold its
//   state, then the least loaded.
//
// Rack awareness (KIP-708, rack.aware.assignment.tags): in the high-availability placement Kafka's
// ClientTagAwareStandbyTaskAssignor (tag-standby-assignor.ts); in the sticky fallback a simpler rule, a
// standby goes first to the client with the most tag values not yet among the clients holding the task. Either
// way one zone's loss leaves a copy elsewhere.

import assert from 'node:assert/strict';
import { assignHighAvailability } from './ha-task-assignor.js';

/** What the leader knows of one client from its members' subscriptions. */
export interface ClientState {
  processId: string;
  /** Stream threads (group members) of the client. */
  capacity: number;
  /** Active tasks in the previous generation. */
  prevActive: Set<string>;
  /** Standby tasks in the previous generation. */
  prevStandby: Set<string>;
  /** Task id -> sum of the changelog offsets its local state holds (larger: more caught up). */
  taskOffsetSums: Map<string, number>;
  /** client.tag.* of the instance (rack-aware standby placement, KIP-708). */
  tags?: Record<string, string>;
}

export interface ClientAssignment {
  active: string[];
  /** Standby replicas, warm-ups included. */
  standby: string[];
  /** The warm-up replicas among the standbys (tasks that will move here once caught up). */
  warmup: string[];
}

/** KIP-441's settings and the lags the leader read (changelog end offsets against the clients' offset sums). */
export interface HighAvailability {
  acceptableRecoveryLag: number;
  maxWarmupReplicas: number;
  /** Records the client's local state of the task lacks (the whole changelog without any); 0 without state. */
  lag(client: ClientState, task: string): number;
  /** Tasks with changelogged state (Kafka's stateful tasks); the others are placed by balance alone. All if absent. */
  stateful?: Set<string>;
  /** KIP-925 rack-aware active placement, when enabled and every rack is known. */
  rackAware?: RackAwareActive;
}

/** rack.aware.assignment.* settings and the racks the leader found (KIP-925). */
export interface RackAwareActive {
  strategy: 'min_traffic' | 'balance_subtopology';
  /** rack.aware.assignment.traffic_cost / non_overlap_cost; null: Kafka's defaults per task kind. */
  trafficCost: number | null;
  nonOverlapCost: number | null;
  /** Source partitions of `task` with no replica in the client's rack. */
  crossRackPartitions(task: string, processId: string): number;
}

/** Task ids in Kafka's order: by sub-topology, then partition. */
export function compareTaskIds(a: string, b: string): number {
  const [sa, pa] = a.split('_').map(Number) as [number, number];
  const [sb, pb] = b.split('_').map(Number) as [number, number];
  return sa === sb ? pa - pb : sa - sb;
}

export function assignTasks(
  clients: ClientState[],
  tasks: string[],
  numStandbyReplicas: number,
  ha: HighAvailability | null = null,
  rackAwareTags: string[] = [],
  log: (line: string) => void = () => {},
): Map<string, ClientAssignment> {
  assert.ok(clients.length > 0, 'no client to assign to');
  const sorted = [...clients].sort((a, b) => (a.processId < b.processId ? -1 : 1));
  if (ha !== null)
    return assignHighAvailability(
      sorted,
      [...tasks].sort(compareTaskIds),
      numStandbyReplicas,
      ha,
      rackAwareTags,
      compareTaskIds,
      log,
    );
  const out = new Map<string, ClientAssignment>(
    sorted.map((c) => [c.processId, { active: [], standby: [], warmup: [] }]),
  );
  const ordered = [...tasks].sort(compareTaskIds);
  const totalCapacity = sorted.reduce((n, c) => n + c.capacity, 0);
  const share = (c: ClientState): number => Math.ceil((ordered.length * c.capacity) / totalCapacity);
  const activeOf = (c: ClientState): string[] => out.get(c.processId)!.active;
  const stateFor = (c: ClientState, task: string): number => c.taskOffsetSums.get(task) ?? -1;
  const subtopologyOf = (task: string): string => task.slice(0, task.indexOf('_'));
  const perSubtopology = new Map<string, number>();
  for (const t of ordered)
    perSubtopology.set(subtopologyOf(t), (perSubtopology.get(subtopologyOf(t)) ?? 0) + 1);
  const subShare = (c: ClientState, st: string): number =>
    Math.ceil((perSubtopology.get(st)! * c.capacity) / totalCapacity);
  const subLoad = (c: ClientState, st: string): number =>
    activeOf(c).filter((t) => subtopologyOf(t) === st).length;
  const fits = (c: ClientState, st: string): boolean =>
    activeOf(c).length < share(c) && subLoad(c, st) < subShare(c, st);

  const unplaced: string[] = [];
  for (const task of ordered) {
    const owner = sorted.find((c) => c.prevActive.has(task));
    if (owner !== undefined && fits(owner, subtopologyOf(task))) activeOf(owner).push(task);
    else unplaced.push(task);
  }
  for (const task of unplaced) {
    const st = subtopologyOf(task);
    const within = sorted.filter((c) => fits(c, st));
    const best = pick(
      within.length > 0 ? within : sorted.filter((c) => activeOf(c).length < share(c)),
      (a, b) =>
        stateFor(b, task) - stateFor(a, task) ||
        subLoad(a, st) / a.capacity - subLoad(b, st) / b.capacity ||
        activeOf(a).length / a.capacity - activeOf(b).length / b.capacity,
    );
    assert.ok(best !== undefined, 'the shares add up to at least the task count');
    activeOf(best).push(task);
  }

  const load = (c: ClientState): number => {
    const a = out.get(c.processId)!;
    return (a.active.length + a.standby.length) / c.capacity;
  };
  // Rack awareness (rack.aware.assignment.tags): a standby goes first to a client whose value of each tag differs
  // from those of the clients already holding the task (active or standby), so a zone's loss keeps a copy.
  const holders = (task: string): ClientState[] =>
    sorted.filter((c) => {
      const a = out.get(c.processId)!;
      return a.active.includes(task) || a.standby.includes(task);
    });
  const newTagValues = (c: ClientState, taken: ClientState[]): number =>
    rackAwareTags.filter((tag) => !taken.some((h) => h.tags?.[tag] === c.tags?.[tag])).length;
  for (const task of ordered) {
    for (let replica = 0; replica < numStandbyReplicas; replica++) {
      const taken = holders(task);
      const candidates = sorted.filter((c) => !taken.includes(c));
      const best = pick(
        candidates,
        (a, b) =>
          newTagValues(b, taken) - newTagValues(a, taken) ||
          Number(b.prevStandby.has(task)) - Number(a.prevStandby.has(task)) ||
          stateFor(b, task) - stateFor(a, task) ||
          load(a) - load(b),
      );
      // Fewer clients than replicas + 1: Kafka assigns what it can and logs a warning; so does the caller.
      if (best === undefined) break;
      out.get(best.processId)!.standby.push(task);
    }
  }
  for (const a of out.values()) {
    a.active.sort(compareTaskIds);
    a.standby.sort(compareTaskIds);
    assert.ok(!a.active.some((t) => a.standby.includes(t)), 'a standby never shares the active task client');
  }
  return out;
}

/** The first of the candidates in the order `better` (negative: a first), stable on ties. */
function pick<T>(candidates: T[], better: (a: T, b: T) => number): T | undefined {
  let best: T | undefined;
  for (const c of candidates) if (best === undefined || better(c, best) < 0) best = c;
  return best;
}

/**
 * Spreads a client's tasks over its members (threads): a task stays with the member that had it, the rest go
 * to the member with the fewest tasks.
 */
export function spreadOverMembers(
  tasks: string[],
  members: { memberId: string; prev: Set<string> }[],
): Map<string, string[]> {
  const out = new Map<string, string[]>(members.map((m) => [m.memberId, []]));
  const share = Math.ceil(tasks.length / Math.max(1, members.length));
  const rest: string[] = [];
  for (const task of tasks) {
    const m = members.find((x) => x.prev.has(task));
    if (m !== undefined && out.get(m.memberId)!.length < share) out.get(m.memberId)!.push(task);
    else rest.push(task);
  }
  for (const task of rest) {
    const m = pick(members, (a, b) => out.get(a.memberId)!.length - out.get(b.memberId)!.length)!;
    out.get(m.memberId)!.push(task);
  }
  return out;
}
