// Rack-aware active task placement (KIP-925, Kafka's RackAwareTaskAssignor.optimizeActiveTasks): after the
// balanced placement, the active tasks are re-placed to minimise cross-rack traffic without changing how many
// tasks each client runs. Pure: the caller says which partitions a task reads and which racks hold them.
//
// The cost of a task on a client: trafficCost for each of the task's source partitions with no replica in the
// client's rack, plus nonOverlapCost when the client is not the one the balanced placement chose. The placement
// minimising the sum is a min-cost flow, as in Kafka: source -> task (capacity 1) -> client (capacity 1, the
// cost) -> sink (capacity: the client's task count in the balanced placement).
//   - min_traffic: the graph above.
//   - balance_subtopology: a task reaches its client through a (sub-topology, client) node of capacity
//     ceil(clientCount / taskCount * subtopologyTaskCount), so a client keeps about its share of each
//     sub-topology's tasks.
// Every task finds a client (the flow is the task count: the balanced placement itself is one such flow for
// min_traffic, and the capacities' fractional solution shows one exists for balance_subtopology).
//
// Among placements of equal cost the one moving the fewest tasks from the balanced placement wins: each cost is
// scaled by (tasks + 1) and a move adds 1, which can never outweigh a unit of the real cost. Kafka gets the same
// preference by cancelling negative cycles from the balanced placement, where only a strictly cheaper placement
// replaces it. The flow is found by successive shortest paths (Bellman-Ford over the residual graph).

import assert from 'node:assert/strict';

export type RackAwareStrategy = 'none' | 'min_traffic' | 'balance_subtopology';

export const RACK_AWARE_STRATEGIES: readonly RackAwareStrategy[] = [
  'none',
  'min_traffic',
  'balance_subtopology',
];

/** Kafka's defaults (RackAwareTaskAssignor) when rack.aware.assignment.traffic_cost / non_overlap_cost are unset. */
export const DEFAULT_COSTS = {
  stateful: { trafficCost: 10, nonOverlapCost: 1 },
  stateless: { trafficCost: 1, nonOverlapCost: 0 },
} as const;

export interface RackPlacementInput {
  /** Task ids to place ("<subtopology>_<partition>"), each currently on one client of `current`. */
  tasks: string[];
  /** Client ids, in a fixed order (ties go to earlier clients). */
  clients: string[];
  /** Task -> the client the balanced placement put it on. */
  current: Map<string, string>;
  /** Partitions of `task` with no replica in `client`'s rack. */
  crossRackPartitions(task: string, client: string): number;
  strategy: Exclude<RackAwareStrategy, 'none'>;
  trafficCost: number;
  nonOverlapCost: number;
}

/** The cost Kafka minimises for one placement (task -> client). */
export function placementCost(input: RackPlacementInput, placement: Map<string, string>): number {
  let total = 0;
  for (const task of input.tasks) {
    const client = placement.get(task)!;
    total += input.trafficCost * input.crossRackPartitions(task, client);
    if (client !== input.current.get(task)) total += input.nonOverlapCost;
  }
  return total;
}

const subtopologyOf = (task: string): string => task.slice(0, task.indexOf('_'));

interface Edge {
  to: number;
  capacity: number;
  cost: number;
  flow: number;
  /** Index of the reverse edge in `to`'s list. */
  reverse: number;
}

class FlowGraph {
  readonly edges: Edge[][];

  constructor(nodes: number) {
    this.edges = Array.from({ length: nodes }, () => []);
  }

  add(from: number, to: number, capacity: number, cost: number): void {
    this.edges[from]!.push({ to, capacity, cost, flow: 0, reverse: this.edges[to]!.length });
    this.edges[to]!.push({
      to: from,
      capacity: 0,
      cost: -cost,
      flow: 0,
      reverse: this.edges[from]!.length - 1,
    });
  }

  /** Min-cost max-flow by successive shortest paths; returns the flow. Costs of forward edges are >= 0. */
  minCostMaxFlow(source: number, sink: number): number {
    const n = this.edges.length;
    let flow = 0;
    for (;;) {
      const dist = new Array<number>(n).fill(Number.POSITIVE_INFINITY);
      const via = new Array<[number, number] | null>(n).fill(null);
      const queued = new Array<boolean>(n).fill(false);
      dist[source] = 0;
      const queue = [source];
      queued[source] = true;
      // Bellman-Ford with a queue (residual edges may be negative; no negative cycle exists in a min-cost flow).
      while (queue.length > 0) {
        const u = queue.shift()!;
        queued[u] = false;
        for (const [i, e] of this.edges[u]!.entries()) {
          if (e.capacity - e.flow <= 0) continue;
          const d = dist[u]! + e.cost;
          if (d < dist[e.to]!) {
            dist[e.to] = d;
            via[e.to] = [u, i];
            if (!queued[e.to]) {
              queued[e.to] = true;
              queue.push(e.to);
            }
          }
        }
      }
      if (dist[sink] === Number.POSITIVE_INFINITY) return flow;
      // Every source edge has capacity 1: each path carries one unit.
      for (let v = sink; v !== source; ) {
        const [u, i] = via[v]!;
        const e = this.edges[u]![i]!;
        e.flow += 1;
        this.edges[v]![e.reverse]!.flow -= 1;
        v = u;
      }
      flow++;
    }
  }
}

/**
 * The placement of `input.tasks` that minimises placementCost while every client keeps its task count (and, for
 * balance_subtopology, at most its share of each sub-topology). Returns task -> client.
 */
export function optimizeActivePlacement(input: RackPlacementInput): Map<string, string> {
  const { tasks, clients } = input;
  if (tasks.length === 0 || clients.length === 0) return new Map(input.current);
  const count = new Map<string, number>(clients.map((c) => [c, 0]));
  for (const t of tasks) {
    const c = input.current.get(t);
    assert.ok(c !== undefined && count.has(c), `task ${t} is not placed on a known client`);
    count.set(c, count.get(c)! + 1);
  }
  const subtopologies = [...new Set(tasks.map(subtopologyOf))].sort((a, b) => Number(a) - Number(b));
  const balance = input.strategy === 'balance_subtopology';
  // Node ids: source, tasks, [per (sub-topology, client)], clients, sink.
  const source = 0;
  const taskNode = (i: number) => 1 + i;
  const stageNode = (s: number, c: number) => 1 + tasks.length + s * clients.length + c;
  const clientNode = (c: number) =>
    1 + tasks.length + (balance ? subtopologies.length * clients.length : 0) + c;
  const sink = clientNode(clients.length);
  const g = new FlowGraph(sink + 1);
  const scale = tasks.length + 1;
  for (const [i, task] of tasks.entries()) {
    g.add(source, taskNode(i), 1, 0);
    const s = subtopologies.indexOf(subtopologyOf(task));
    for (const [c, client] of clients.entries()) {
      const stays = input.current.get(task) === client;
      const cost =
        input.trafficCost * input.crossRackPartitions(task, client) + (stays ? 0 : input.nonOverlapCost);
      g.add(taskNode(i), balance ? stageNode(s, c) : clientNode(c), 1, cost * scale + (stays ? 0 : 1));
    }
  }
  if (balance) {
    for (const [s, st] of subtopologies.entries()) {
      const inSubtopology = tasks.filter((t) => subtopologyOf(t) === st).length;
      for (const [c, client] of clients.entries())
        g.add(
          stageNode(s, c),
          clientNode(c),
          Math.ceil((count.get(client)! / tasks.length) * inSubtopology),
          0,
        );
    }
  }
  for (const [c, client] of clients.entries()) g.add(clientNode(c), sink, count.get(client)!, 0);
  const flow = g.minCostMaxFlow(source, sink);
  assert.equal(flow, tasks.length, 'every task finds a client');

  const out = new Map(input.current);
  for (const [i, task] of tasks.entries()) {
    const e = g.edges[taskNode(i)]!.find((x) => x.capacity === 1 && x.flow === 1);
    assert.ok(e !== undefined, `task ${task} has no client in the flow`);
    const c = balance ? (e.to - 1 - tasks.length) % clients.length : e.to - clientNode(0);
    out.set(task, clients[c]!);
  }
  return out;
}
