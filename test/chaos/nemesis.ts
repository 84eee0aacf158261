// The nemesis: a schedule of faults drawn from the run's seed before the run starts (kind, target, duration,
// the gap before the next, sometimes an overlap with the previous one of another family), then played against
// the cluster, each fault started and healed as an op of process "nemesis" in the history. Targets named
// "controller" are resolved when the fault starts (whichever broker runs the controller then). healAll()
// undoes everything at the end of the run, whatever is left in force, and restarts whatever is down.

import type { ChaosCluster } from './chaos-cluster.js';
import { REPLICA_LAG_TIME_MAX_MS, withTimeout, ZK_SESSION_TIMEOUT_MS } from './chaos-cluster.js';
import type { History } from './history.js';
import type { Grudge } from './netns.js';
import { sleep } from './nodes.js';
import type { Rng } from './rng.js';

export const FAULT_KINDS = [
  'kill',
  'kill-controller',
  'pause',
  'pause-controller',
  'partition-halves',
  'partition-isolate',
  'partition-controller',
  'partition-zk',
  'partition-bridge',
  'partition-asymmetric',
  'slow-link',
  'lossy-link',
  'zk-restart',
  'disk-full',
  'clock-jump',
] as const;

/**
 * Faults drawn only when --faults names them (so that the default schedules of every seed stay as they were):
 * partition-unclean sets up an unclean leader election of partition 0 of the workload's topic. First it cuts
 * one follower off the leader and the other follower (it still hears ZooKeeper) until it has left the ISR,
 * then it cuts the leader and the in-sync follower off ZooKeeper and that lagging follower, which is then the
 * only live replica the controller can elect. slow-disk makes one broker's fsync and fdatasync sleep 200-3000 ms
 * each (slow-disk.ts) while the page cache still takes writes.
 */
export const OPT_IN_FAULT_KINDS = ['partition-unclean', 'slow-disk'] as const;

export type FaultKind = (typeof FAULT_KINDS)[number] | (typeof OPT_IN_FAULT_KINDS)[number];

export function isFaultKind(kind: string): kind is FaultKind {
  return (
    (FAULT_KINDS as readonly string[]).includes(kind) ||
    (OPT_IN_FAULT_KINDS as readonly string[]).includes(kind)
  );
}

/** partition-unclean: how long the follower is cut off before the leader side is, and the whole fault. */
const UNCLEAN_LAG_PHASE_MS = REPLICA_LAG_TIME_MAX_MS + 4_000;
const UNCLEAN_FAULT_MS = UNCLEAN_LAG_PHASE_MS + ZK_SESSION_TIMEOUT_MS + 8_000;

export interface PlannedFault {
  kind: FaultKind;
  /** When it starts, in ms after the nemesis starts. */
  atMs: number;
  durationMs: number;
  /** Node names (zk, b0..) the fault acts on or divides, as drawn from the seed. */
  nodes: string[];
  /** For partition-bridge: the node that hears both sides; for asymmetric: the deaf node. */
  pivot?: string;
  /** For link faults: delay in ms or loss in percent. */
  amount?: number;
}

/**
 * Faults of different families may overlap (a broker killed during a partition); two of one family may not,
 * since healing one would undo the other (partitions share each node's rule chain, link faults its qdisc).
 */
export function familyOf(kind: FaultKind): 'process' | 'partition' | 'link' | 'disk' | 'clock' {
  if (kind.startsWith('partition-')) return 'partition';
  if (kind === 'slow-link' || kind === 'lossy-link') return 'link';
  if (kind === 'disk-full' || kind === 'slow-disk') return 'disk';
  if (kind === 'clock-jump') return 'clock';
  return 'process';
}

/** How often a fault starts while the previous one is still in force (when their families differ). */
const OVERLAP_PROBABILITY = 0.3;

export interface NemesisPlanOptions {
  brokers: number;
  durationMs: number;
  kinds: readonly FaultKind[];
}

/** Draws the whole schedule from the seed. */
export function planFaults(rng: Rng, o: NemesisPlanOptions): PlannedFault[] {
  const brokers = Array.from({ length: o.brokers }, (_, i) => `b${i}`);
  const all = ['zk', ...brokers];
  const plan: PlannedFault[] = [];
  let at = 0;
  while (true) {
    const kind = rng.pick(o.kinds);
    // Pauses outlast both the ZooKeeper session and the replica lag time, so they cost the broker its
    // registration and its place in the ISR; other faults last a few seconds more or less than that.
    const durationMs =
      kind === 'partition-unclean'
        ? UNCLEAN_FAULT_MS
        : kind === 'pause' || kind === 'pause-controller'
          ? rng.int(ZK_SESSION_TIMEOUT_MS + 1_000, ZK_SESSION_TIMEOUT_MS + 6_000)
          : rng.int(Math.min(REPLICA_LAG_TIME_MAX_MS, ZK_SESSION_TIMEOUT_MS) - 2_000, 14_000);
    const previous = plan[plan.length - 1];
    let start = at;
    if (previous !== undefined && previous.durationMs > 2_000 && rng.next() < OVERLAP_PROBABILITY) {
      const overlapAt = previous.atMs + rng.int(1_000, previous.durationMs - 1_000);
      const clash = plan.some(
        (f) =>
          familyOf(f.kind) === familyOf(kind) &&
          f.atMs + f.durationMs > overlapAt &&
          f.atMs < overlapAt + durationMs,
      );
      if (!clash) start = overlapAt;
    }
    if (start + durationMs > o.durationMs) break;
    const fault: PlannedFault = { kind, atMs: start, durationMs, nodes: [] };
    switch (kind) {
      case 'kill':
      case 'pause':
      case 'partition-isolate':
      case 'slow-link':
      case 'lossy-link':
        fault.nodes = [rng.pick(brokers)];
        break;
      case 'disk-full':
        fault.nodes = ['b0'];
        break;
      case 'partition-halves': {
        const order = rng.shuffle(all);
        const cut = rng.int(1, order.length - 1);
        fault.nodes = order;
        fault.amount = cut;
        break;
      }
      case 'partition-bridge': {
        fault.nodes = rng.shuffle(all);
        fault.pivot = fault.nodes[Math.floor(fault.nodes.length / 2)];
        break;
      }
      case 'partition-asymmetric': {
        const deaf = rng.pick(all);
        const others = rng.shuffle(all.filter((n) => n !== deaf));
        fault.pivot = deaf;
        fault.nodes = others.slice(0, rng.int(1, others.length));
        break;
      }
      default:
        break;
    }
    if (kind === 'slow-link') fault.amount = rng.int(100, 500);
    if (kind === 'lossy-link') fault.amount = rng.int(10, 40);
    if (kind === 'slow-disk') {
      fault.nodes = [rng.pick(brokers)];
      fault.amount = rng.int(200, 3_000);
    }
    if (kind === 'clock-jump') {
      fault.nodes = [rng.pick(brokers)];
      fault.amount = rng.pick([-1, 1]) * rng.int(30, 300);
    }
    plan.push(fault);
    at = Math.max(at, start + durationMs) + rng.int(3_000, 8_000);
  }
  return plan;
}

/** A readable one-line account of a planned fault. */
export function describeFault(f: PlannedFault): string {
  switch (f.kind) {
    case 'partition-halves': {
      const cut = f.amount ?? 1;
      return `partition ${f.nodes.slice(0, cut).join(',')} | ${f.nodes.slice(cut).join(',')}`;
    }
    case 'partition-bridge':
      return `bridge partition, ${f.pivot} hears both sides of ${bridgeSides(f)
        .map((s) => s.join(','))
        .join(' | ')}`;
    case 'partition-asymmetric':
      return `${f.pivot} stops hearing ${f.nodes.join(',')} (one way)`;
    case 'slow-link':
      return `slow link on ${f.nodes[0]} (${f.amount} ms)`;
    case 'lossy-link':
      return `lossy link on ${f.nodes[0]} (${f.amount}% loss)`;
    case 'slow-disk':
      return `slow disk on ${f.nodes[0]} (fsync +${f.amount} ms)`;
    case 'clock-jump':
      return `${f.nodes[0]}'s wall clock jumps ${(f.amount ?? 0) > 0 ? '+' : ''}${f.amount} s`;
    default:
      return f.nodes.length > 0 ? `${f.kind} ${f.nodes.join(',')}` : f.kind;
  }
}

function bridgeSides(f: PlannedFault): [string[], string[]] {
  const rest = f.nodes.filter((n) => n !== f.pivot);
  const half = Math.ceil(rest.length / 2);
  return [rest.slice(0, half), rest.slice(half)];
}

function cutBetween(a: readonly string[], b: readonly string[]): Grudge {
  const g: Grudge = new Map();
  for (const x of a) g.set(x, new Set(b));
  for (const y of b) g.set(y, new Set(a));
  return g;
}

/**
 * Runs every fault's timeline at once, so that overlapping ones (see planFaults) are in force together, except
 * that a fault is handed the end of the previous one of its family: the plan keeps their planned spans apart, but
 * healing takes real time (a killed broker restarting on a loaded machine), and a kill that lands on a broker
 * still starting from the fault before would fail that healing instead of testing anything.
 */
export async function playInFamilyOrder<F extends { kind: FaultKind; atMs: number }>(
  plan: readonly F[],
  run: (fault: F, previousHealed: Promise<void>) => Promise<void>,
): Promise<void> {
  const lastOfFamily = new Map<string, Promise<void>>();
  const runs = [...plan]
    .sort((a, b) => a.atMs - b.atMs)
    .map((fault) => {
      const family = familyOf(fault.kind);
      const previous = lastOfFamily.get(family) ?? Promise.resolve();
      const done = run(fault, previous);
      // A failed fault still frees its family (the failure surfaces from Promise.all below).
      lastOfFamily.set(
        family,
        done.catch(() => undefined),
      );
      return done;
    });
  await Promise.all(runs);
}

export class Nemesis {
  private stopped = false;
  private readonly wakers = new Set<() => void>();

  constructor(
    private readonly cluster: ChaosCluster,
    private readonly history: History,
    private readonly log: (line: string) => void,
    /** The workload's topic, whose partition 0 partition-unclean acts on. */
    private readonly topic = 'chaos',
  ) {}

  /** Plays the plan; resolves when it is over or stop() was called (the fault in force is healed). */
  async play(plan: readonly PlannedFault[]): Promise<void> {
    const start = performance.now();
    await playInFamilyOrder(plan, async (fault, previousHealed) => {
      await this.sleepUntil(start + fault.atMs);
      if (this.stopped) return;
      const late = performance.now();
      await previousHealed;
      if (this.stopped) return;
      const waitedMs = Math.round(performance.now() - late);
      if (waitedMs > 0)
        this.log(`nemesis: ${fault.kind} starts ${waitedMs} ms late: the fault before it was healing`);
      const undo = await this.begin(fault);
      await this.sleepUntil(performance.now() + fault.durationMs);
      if (undo !== null) await this.end(fault, undo);
    });
  }

  stop(): void {
    this.stopped = true;
    for (const wake of [...this.wakers]) wake();
  }

  private async sleepUntil(t: number): Promise<void> {
    const ms = t - performance.now();
    if (ms <= 0 || this.stopped) return;
    await new Promise<void>((done) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = (): void => {
        clearTimeout(timer);
        this.wakers.delete(finish);
        done();
      };
      timer = setTimeout(finish, ms);
      this.wakers.add(finish);
    });
  }

  private async begin(fault: PlannedFault): Promise<(() => Promise<void>) | null> {
    const value: Record<string, unknown> = { kind: fault.kind, description: describeFault(fault) };
    this.history.add('invoke', 'nemesis', `start-${fault.kind}`, value);
    try {
      const { undo, detail } = await this.inject(fault);
      this.history.add('ok', 'nemesis', `start-${fault.kind}`, { ...value, ...detail });
      this.log(
        `nemesis: ${describeFault(fault)} ${detail.target !== undefined ? `(target ${detail.target}) ` : ''}for ${fault.durationMs} ms`,
      );
      return undo;
    } catch (e) {
      this.history.add('info', 'nemesis', `start-${fault.kind}`, value, String(e));
      this.log(`nemesis: ${fault.kind} could not start: ${String(e)}`);
      return null;
    }
  }

  private async end(fault: PlannedFault, undo: () => Promise<void>): Promise<void> {
    this.history.add('invoke', 'nemesis', `stop-${fault.kind}`, { kind: fault.kind });
    try {
      await undo();
      this.history.add('ok', 'nemesis', `stop-${fault.kind}`, { kind: fault.kind });
    } catch (e) {
      this.history.add('info', 'nemesis', `stop-${fault.kind}`, { kind: fault.kind }, String(e));
      this.log(`nemesis: healing ${fault.kind} failed: ${String(e)}`);
    }
  }

  /** See OPT_IN_FAULT_KINDS. */
  private async injectUnclean(): Promise<{ undo: () => Promise<void>; detail: Record<string, unknown> }> {
    const net = this.cluster.net;
    const [d] = await withTimeout(this.cluster.adminClient().describeTopics([this.topic]), 8_000);
    const p = d?.partitions.find((x) => x.partition === 0);
    if (p === undefined || p.leader < 0) throw new Error(`partition ${this.topic}-0 has no leader`);
    const controller = await this.cluster.controllerId();
    // The lagging follower should not run the controller: the leader could not shrink the ISR without it.
    const followers = p.replicas
      .filter((r) => r !== p.leader)
      .sort((a, b) => Number(a === controller) - Number(b === controller));
    if (followers.length < 2) throw new Error(`partition ${this.topic}-0 has fewer than 3 replicas`);
    const leader = `b${p.leader}`;
    const lagging = `b${followers[0]}`;
    const partner = `b${followers[1]}`;
    await net.partition(cutBetween([lagging], [leader, partner]));
    let over = false;
    const second = sleep(UNCLEAN_LAG_PHASE_MS).then(async () => {
      if (over) return;
      await net.partition(cutBetween([leader, partner], [lagging, 'zk']));
      this.history.add('ok', 'nemesis', 'phase-partition-unclean', {
        sides: [
          [leader, partner],
          [lagging, 'zk'],
        ],
      });
      this.log(`nemesis: partition-unclean: ${leader},${partner} | ${lagging},zk`);
    });
    const undo = async () => {
      over = true;
      await second;
      await net.heal();
    };
    return { undo, detail: { target: lagging, leader, partner, lagging } };
  }

  private async controllerNode(): Promise<string> {
    const id = await this.cluster.controllerId();
    if (id === null) throw new Error('no controller known');
    return `b${id}`;
  }

  private async inject(
    fault: PlannedFault,
  ): Promise<{ undo: () => Promise<void>; detail: Record<string, unknown> }> {
    const c = this.cluster;
    const net = c.net;
    const brokerOf = (node: string) => c.broker(Number(node.slice(1)));
    switch (fault.kind) {
      case 'kill':
      case 'kill-controller': {
        const node = fault.kind === 'kill' ? fault.nodes[0]! : await this.controllerNode();
        const broker = brokerOf(node);
        await broker.kill();
        // Another fault may have started it again meanwhile (disk-full restarts a broker that halted).
        return { undo: async () => (broker.running ? undefined : broker.start()), detail: { target: node } };
      }
      case 'pause':
      case 'pause-controller': {
        const node = fault.kind === 'pause' ? fault.nodes[0]! : await this.controllerNode();
        const broker = brokerOf(node);
        broker.pause();
        return { undo: async () => broker.resume(), detail: { target: node } };
      }
      case 'zk-restart': {
        await c.zk.kill();
        return { undo: () => c.zk.start(), detail: { target: 'zk' } };
      }
      case 'partition-halves': {
        const cut = fault.amount ?? 1;
        const a = fault.nodes.slice(0, cut);
        const b = fault.nodes.slice(cut);
        await net.partition(cutBetween(a, b));
        return { undo: () => net.heal(), detail: { sides: [a, b] } };
      }
      case 'partition-isolate':
      case 'partition-controller':
      case 'partition-zk': {
        const node =
          fault.kind === 'partition-zk'
            ? 'zk'
            : fault.kind === 'partition-isolate'
              ? fault.nodes[0]!
              : await this.controllerNode();
        const rest = [...net.nodes.keys()].filter((n) => n !== node);
        await net.partition(cutBetween([node], rest));
        return { undo: () => net.heal(), detail: { target: node, sides: [[node], rest] } };
      }
      case 'partition-bridge': {
        const [a, b] = bridgeSides(fault);
        await net.partition(cutBetween(a, b));
        return { undo: () => net.heal(), detail: { sides: [a, b], bridge: fault.pivot } };
      }
      case 'partition-asymmetric': {
        const g: Grudge = new Map([[fault.pivot!, new Set(fault.nodes)]]);
        await net.partition(g);
        return { undo: () => net.heal(), detail: { deaf: fault.pivot, unheard: fault.nodes } };
      }
      case 'slow-link':
      case 'lossy-link': {
        const node = fault.nodes[0]!;
        await net.degrade(
          node,
          fault.kind === 'slow-link'
            ? { kind: 'slow', delayMs: fault.amount ?? 200 }
            : { kind: 'lossy', lossPercent: fault.amount ?? 20 },
        );
        return { undo: () => net.restore(node), detail: { target: node, netem: net.hasNetem } };
      }
      case 'clock-jump': {
        const node = fault.nodes[0]!;
        const id = Number(node.slice(1));
        c.setClockOffset(id, fault.amount ?? 60);
        return {
          undo: async () => c.setClockOffset(id, 0),
          detail: { target: node, offsetSeconds: fault.amount },
        };
      }
      case 'partition-unclean':
        return this.injectUnclean();
      case 'slow-disk': {
        const id = Number(fault.nodes[0]!.slice(1));
        c.setFsyncDelay(id, fault.amount ?? 1_000);
        return {
          undo: async () => c.setFsyncDelay(id, 0),
          detail: { target: fault.nodes[0], fsyncDelayMs: fault.amount },
        };
      }
      case 'disk-full': {
        const id = Number(fault.nodes[0]!.slice(1));
        const bytes = await c.fillDisk(id);
        // A broker whose log directory failed a write halts (as Kafka's does); the operator frees space and
        // starts it again.
        const undo = async () => {
          await c.freeDisk(id);
          if (!c.broker(id).running) await c.broker(id).start();
        };
        return { undo, detail: { target: fault.nodes[0], filledBytes: bytes } };
      }
    }
  }

  /** Undoes every fault and brings every process back; records it as one nemesis op. */
  async healAll(): Promise<void> {
    const c = this.cluster;
    this.history.add('invoke', 'nemesis', 'heal-all');
    const problems: string[] = [];
    const attempt = async (what: string, fn: () => Promise<void>) => {
      try {
        await fn();
      } catch (e) {
        problems.push(`${what}: ${String(e)}`);
      }
    };
    await attempt('network', () => c.net.heal());
    await attempt('links', () => c.net.restoreAll());
    if (c.options.diskBroker !== null) await attempt('disk', () => c.freeDisk(c.options.diskBroker!));
    for (const p of c.processes) if (p.isPaused) p.resume();
    if (c.options.slowDisk)
      for (const b of c.brokers)
        await attempt(`${b.name} disk speed`, async () => c.setFsyncDelay(b.brokerId, 0));
    if (c.options.clockFaults)
      for (const b of c.brokers)
        await attempt(`${b.name} clock`, async () => c.setClockOffset(b.brokerId, 0));
    if (!c.zk.running) await attempt('zk', () => c.zk.start());
    for (const b of c.brokers) {
      if (b.running) continue;
      await attempt(b.name, () => b.start());
    }
    this.history.add(problems.length === 0 ? 'ok' : 'info', 'nemesis', 'heal-all', { problems });
    if (problems.length > 0) this.log(`heal-all problems: ${problems.join('; ')}`);
    await sleep(0);
  }
}
