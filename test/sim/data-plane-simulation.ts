// A seeded, deterministic simulation of Brook's data plane (issue 13): the partitions and real logs of three
// brokers (real files in a temporary directory) run in one process on one manual clock. Everything between them
// is a message of a simulated network that a seeded scheduler delivers in any order, delays or drops: replica
// fetches and their answers (the fetchers reach their leaders through a LeaderEndPoint that sends them), the
// leaders' AlterPartition requests, the controller's LeaderAndIsr requests (in order per broker). Between
// messages the scheduler moves the clock (fetcher backoffs, ISR checks, produce deadlines fire), produces
// acks=all writes (min.insync.replicas=2, replication factor 3), crashes brokers (kill -9: memory lost, files
// kept) and restarts them from their files, and moves leaders. The controller (sim-controller.ts) follows Kafka's
// rules. After every step the invariants below are checked; a violation stops the run with the seed and the
// trace of every step, and the same seed replays the same run.
//
// Invariants, at every step:
// - no acknowledged acks=all write is lost: every live member of the ISR holds it at its offset;
// - a replica's high watermark never moves back (within one run of a broker), and never passes its log end;
// - a replica's leader epoch never goes back; every leader was in the ISR when elected (sim-controller.ts);
// - a member of the ISR never truncates below the committed high watermark (the highest seen on any replica);
// - the logs of the live ISR members agree below their high watermarks.
// And at the end, after the faults stop and every broker is back: the cluster converges (every partition led,
// every replica in the ISR, every log equal), so that a fetcher stuck in a loop fails the run too.

import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalController } from '../../src/broker/cluster/isr-manager.js';
import type { LeaderEndPoint, LeaderOffset } from '../../src/broker/cluster/leader-end-point.js';
import type { Partition } from '../../src/broker/replica/partition.js';
import { appendAsLeaderAndWait } from '../../src/broker/replica/replicated-append.js';
import { ManualClock } from '../../src/common/clock.js';
import type { BrokerId, Offset } from '../../src/common/ids.js';
import { type Random, seededRandom } from '../../src/controller/random.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { FetchRequest, FetchResponse } from '../../src/protocol/messages/01-fetch.js';
import type { LeaderAndIsrRequest } from '../../src/protocol/messages/04-leader-and-isr.js';
import type {
  OffsetForLeaderEpochRequest,
  OffsetForLeaderEpochResponse,
} from '../../src/protocol/messages/23-offset-for-leader-epoch.js';
import type {
  AlterPartitionRequest,
  AlterPartitionResponse,
} from '../../src/protocol/messages/56-alter-partition.js';
import { buildBatch } from '../../src/protocol/records/batch-builder.js';
import type { Log } from '../../src/storage/log.js';
import { answerEpochEndOffsets, answerFetch, answerOffset, readLog } from './in-process-leader.js';
import { type Incarnation, SimBroker, SOCKET_TIMEOUT_MS } from './sim-broker.js';
import { type PartitionState, SimController, TOPIC_ID } from './sim-controller.js';
import { SimNetwork } from './sim-network.js';

export const TOPIC = 'sim';
const BROKER_IDS = [1, 2, 3];
const MIN_INSYNC_REPLICAS = 2;
const PRODUCE_TIMEOUT_MS = 30_000;
const PRODUCES_IN_FLIGHT_MAX = 5;
/**
 * Rounds of the final phase (no faults, every broker back) within which the cluster must converge: each round
 * delivers every message in flight and moves the clock HEAL_ADVANCE_MS.
 */
const HEAL_ROUNDS_MAX = 400;
const HEAL_ADVANCE_MS = 25;
/** Event-loop turns a step may take to settle (file reads in flight) before the run is declared stuck. */
const SETTLE_TURNS_MAX = 200_000;
/** Trace lines printed with a failure (the whole trace is in the error's `trace`). */
const TRACE_TAIL_LINES = 80;

export interface SimulationOptions {
  readonly seed: number;
  readonly steps: number;
  /** A directory of its own for the run's broker directories (removed by the caller). */
  readonly dir: string;
  readonly partitions?: number;
  /**
   * Fault weights (relative, per step); 0 turns a fault off. Defaults: the mix the fast and slow suites run.
   */
  readonly weights?: Partial<Weights>;
}

interface Weights {
  deliver: number;
  drop: number;
  advance: number;
  produce: number;
  crash: number;
  /** A crash that also loses what the broker had not fsync'ed. */
  powerLoss: number;
  restart: number;
  moveLeader: number;
}

const DEFAULT_WEIGHTS: Weights = {
  deliver: 90,
  drop: 6,
  advance: 30,
  produce: 30,
  crash: 2,
  powerLoss: 1,
  restart: 8,
  moveLeader: 3,
};

export interface SimulationResult {
  readonly seed: number;
  readonly trace: readonly string[];
  readonly acked: number;
  readonly produced: number;
  readonly crashes: number;
  readonly powerLosses: number;
  readonly leaderChanges: number;
  readonly truncations: number;
  /** Steps the final phase took to converge. */
  readonly healSteps: number;
}

/** A failed run: the message names the seed, the step and the violation, with the tail of the trace. */
export class SimulationFailure extends Error {
  override name = 'SimulationFailure';
  constructor(
    message: string,
    readonly seed: number,
    readonly trace: readonly string[],
  ) {
    super(message);
  }
}

interface AckedWrite {
  readonly partition: number;
  readonly offset: number;
  readonly value: string;
}

export class DataPlaneSimulation {
  readonly clock = new ManualClock();
  readonly network = new SimNetwork();
  private readonly random: Random;
  private readonly brokers: SimBroker[];
  private readonly controller: SimController;
  private readonly weights: Weights;
  private readonly partitions: number;
  readonly trace: string[] = [];
  private readonly violations: string[] = [];
  private readonly acked: AckedWrite[] = [];
  /** The broker epoch each broker registered with (LeaderAndIsr for an older one is refused). */
  private readonly registeredEpoch = new Map<number, number>();
  /** Per broker run and partition: the last high watermark and leader epoch seen. */
  private readonly lastSeen = new Map<string, { hw: number; leaderEpoch: number }>();
  /** Logs whose truncations are watched (a Log object once). */
  private readonly watchedLogs = new WeakSet<Log>();
  /** The highest high watermark seen on any replica of each partition: committed. */
  private readonly committedHw = new Map<number, number>();
  private readonly readCache = new WeakMap<Log, { version: string; records: Map<number, string> }>();
  private asyncInFlight = 0;
  /** acks=all writes not answered yet, with the broker run they were sent to. */
  private readonly producesInFlight = new Set<{ readonly broker: SimBroker; readonly incarnation: number }>();
  private produced = 0;
  private crashes = 0;
  private powerLosses = 0;
  /** Brokers that lost power and are not yet back in every ISR of their partitions. */
  private readonly lostPower = new Set<number>();
  private leaderChanges = 0;
  private truncations = 0;
  private step = 0;

  constructor(private readonly options: SimulationOptions) {
    this.random = seededRandom(options.seed);
    this.weights = { ...DEFAULT_WEIGHTS, ...options.weights };
    this.partitions = options.partitions ?? 2;
    this.brokers = BROKER_IDS.map((id) => {
      const dir = join(options.dir, `broker-${id}`);
      mkdirSync(dir, { recursive: true });
      return new SimBroker(id as BrokerId, dir, this.clock, MIN_INSYNC_REPLICAS);
    });
    this.controller = new SimController(TOPIC, this.partitions, BROKER_IDS, {
      leaderAndIsr: (brokerId, states) => this.sendLeaderAndIsr(brokerId, states),
      trace: (line) => this.log(line),
      violation: (line) => this.violations.push(line),
    });
  }

  async run(): Promise<SimulationResult> {
    try {
      for (const b of this.brokers) this.startBroker(b);
      this.controller.createPartitions();
      for (this.step = 1; this.step <= this.options.steps; this.step++) {
        this.randomStep();
        await this.settle();
        await this.checkInvariants();
      }
      const healSteps = await this.heal();
      return {
        seed: this.options.seed,
        trace: this.trace,
        acked: this.acked.length,
        produced: this.produced,
        crashes: this.crashes,
        powerLosses: this.powerLosses,
        leaderChanges: this.leaderChanges,
        truncations: this.truncations,
        healSteps,
      };
    } catch (err) {
      if (err instanceof SimulationFailure) throw err;
      // An assertion inside Brook (or a crash of the harness) is a failure of this seed too.
      this.violations.push(`exception: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      throw this.failure();
    } finally {
      for (const b of this.brokers) b.crash();
    }
  }

  // ---- the scheduler ----

  private randomStep(): void {
    const w = this.weights;
    const deliverable = this.network.deliverable();
    const droppable = deliverable.filter((m) => m.droppable);
    // A crashed broker may restart before the controller saw its session expire (a bounce).
    const dead = this.brokers.filter((b) => !b.alive);
    const live = this.brokers.filter((b) => b.alive);
    this.refreshLostPower();
    const powerLossTargets = this.powerLossTargets();
    const choices: [number, () => void][] = [
      [deliverable.length > 0 ? w.deliver : 0, () => this.deliver(this.pick(deliverable))],
      [droppable.length > 0 ? w.drop : 0, () => this.drop(this.pick(droppable))],
      [w.advance, () => this.advance(1 + this.random.nextInt(400))],
      [this.liveProduces() < PRODUCES_IN_FLIGHT_MAX ? w.produce : 0, () => this.produce()],
      [live.length > 0 && this.lostPower.size === 0 ? w.crash : 0, () => this.crash(this.pick(live))],
      [powerLossTargets.length > 0 ? w.powerLoss : 0, () => this.crash(this.pick(powerLossTargets), true)],
      [dead.length > 0 ? w.restart : 0, () => this.restart(this.pick(dead))],
      [w.moveLeader, () => this.moveLeader(this.random.nextInt(this.partitions))],
    ];
    const total = choices.reduce((sum, [weight]) => sum + weight, 0);
    let r = this.random.nextInt(total);
    for (const [weight, action] of choices) {
      if (r < weight) {
        action();
        return;
      }
      r -= weight;
    }
  }

  private pick<T>(items: readonly T[]): T {
    return items[this.random.nextInt(items.length)]!;
  }

  private deliver(message: ReturnType<SimNetwork['deliverable']>[number]): void {
    this.network.take(message);
    this.log(`deliver ${message.label}`);
    message.deliver();
  }

  private drop(message: ReturnType<SimNetwork['deliverable']>[number]): void {
    this.network.take(message);
    this.log(`drop ${message.label}`);
    message.drop();
  }

  private advance(ms: number): void {
    this.log(`advance ${ms} ms`);
    this.clock.advance(ms);
  }

  /**
   * The final phase: no more faults; every dead broker restarts once the controller has seen it dead; messages
   * are delivered and time moves until every partition is led with every replica in the ISR and equal logs.
   */
  private async heal(): Promise<number> {
    this.log('heal: faults stop');
    for (let round = 1; round <= HEAL_ROUNDS_MAX; round++) {
      const dead = this.brokers.filter((b) => !b.alive && !this.controller.live.has(b.id));
      if (dead.length > 0) this.restart(dead[0]!);
      // Every message in flight now is delivered (in a seeded order); answers they cause wait for the next round.
      const deliverable = this.network.deliverable();
      while (deliverable.length > 0) {
        const m = deliverable.splice(this.random.nextInt(deliverable.length), 1)[0]!;
        this.step++;
        this.deliver(m);
        await this.settle();
        await this.checkInvariants();
      }
      this.step++;
      this.advance(HEAL_ADVANCE_MS);
      await this.settle();
      await this.checkInvariants();
      if (await this.converged()) return round;
    }
    this.violations.push(`no convergence within ${HEAL_ROUNDS_MAX} rounds after the faults stopped`);
    throw this.failure();
  }

  private async converged(): Promise<boolean> {
    if (this.liveProduces() > 0) return false;
    for (const [p, s] of this.controller.states) {
      if (s.leader < 0 || s.isr.length !== s.replicas.length) return false;
      const ends = new Set<number>();
      for (const b of this.brokers) {
        const part = b.partition(TOPIC, p);
        if (part === undefined) return false;
        ends.add(part.log.logEndOffset);
        if (part.leaderEpoch !== s.leaderEpoch) return false;
      }
      if (ends.size !== 1) return false;
      const leader = this.brokers[s.leader - 1]!.partition(TOPIC, p)!;
      if (leader.log.highWatermark !== leader.log.logEndOffset) return false;
    }
    return true;
  }

  /** Writes in flight at brokers still running (a crashed broker's never answer: its client gave up). */
  private liveProduces(): number {
    let n = 0;
    for (const w of this.producesInFlight) if (w.broker.incarnation === w.incarnation) n++;
    return n;
  }

  /**
   * Runs the promise chains and file I/O a step started until nothing is left to run: queued appends and flushes
   * (segment, index and producer snapshot fsyncs) alike, so a crash never comes while one is on its way and a
   * power loss cuts exactly what the recovery point says was not synced.
   */
  private async settle(): Promise<void> {
    let quiet = 0;
    for (let i = 0; i < SETTLE_TURNS_MAX; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      const busy =
        this.asyncInFlight > 0 ||
        this.brokers.some((b) => b.writesEnding) ||
        this.brokers.some(
          (b) =>
            b.running !== null &&
            [...b.running.logs.allLogs()].some((l) => l.hasQueuedAppends || l.hasFlushRunning),
        );
      if (busy) quiet = 0;
      else if (++quiet >= 3) return;
    }
    this.violations.push('a step did not settle');
    throw this.failure();
  }

  /** Counts an asynchronous piece of work (a file read) that a step waits for. */
  private track<T>(work: Promise<T>): Promise<T> {
    this.asyncInFlight++;
    return work.finally(() => {
      this.asyncInFlight--;
    });
  }

  // ---- faults and clients ----

  private startBroker(b: SimBroker): void {
    const running = b.start(
      (leaderId) => new SimLeaderEndPoint(this, b.id, b.incarnation, leaderId),
      this.localController(b),
    );
    // Registered only now that its logs are recovered (as Brook's broker does): only then can it be elected.
    const epoch = this.controller.brokerStarted(b.id);
    this.registeredEpoch.set(b.id, epoch);
    running.isr.brokerEpoch = epoch;
    b.brokerEpoch = epoch;
  }

  private crash(b: SimBroker, powerLoss = false): void {
    this.crashes++;
    this.log(`${powerLoss ? 'power loss of' : 'crash'} broker ${b.id}`);
    if (powerLoss) {
      this.powerLosses++;
      this.lostPower.add(b.id);
      for (const cut of b.crash({ powerLoss: true })) this.log(`  ${cut}`);
    } else {
      b.crash();
    }
    // The controller sees it gone when its session expires, some steps later (unless it registers again first).
    const epoch = this.registeredEpoch.get(b.id)!;
    this.network.send({
      label: `session expiry of broker ${b.id} (epoch ${epoch})`,
      droppable: false,
      deliver: () => this.controller.brokerDied(b.id, epoch),
      drop: () => {},
    });
  }

  /**
   * The brokers a power loss may hit now. Kafka keeps an acknowledged write through the loss of one replica's
   * unflushed bytes because another ISR member holds it; ZooKeeper-mode Kafka does not survive the loss of the
   * last ISR member's bytes (KIP-966's eligible leader replicas close that in KRaft), and neither does Brook. So a
   * power loss hits only a follower that shares every ISR it is in, while every broker runs, and no other crash
   * or power loss comes until it is whole again: back in every ISR of its partitions.
   */
  private powerLossTargets(): SimBroker[] {
    if (this.lostPower.size > 0 || this.brokers.some((b) => !b.alive)) return [];
    const states = [...this.controller.states.values()];
    return this.brokers.filter((b) =>
      states.every((s) => s.leader !== b.id && (!s.isr.includes(b.id) || s.isr.length > 1)),
    );
  }

  /** Forgets power losses whose broker is whole again (see powerLossTargets). */
  private refreshLostPower(): void {
    for (const id of this.lostPower) {
      const b = this.brokers[id - 1]!;
      const states = [...this.controller.states.values()];
      if (b.alive && states.every((s) => s.isr.includes(id) || !s.replicas.includes(id)))
        this.lostPower.delete(id);
    }
  }

  private restart(b: SimBroker): void {
    this.log(`restart broker ${b.id}`);
    // A real restart follows a dead process, whose writes stopped with it (settle waits for the crashed
    // incarnation's to end).
    assert(
      !b.writesEnding,
      `broker ${b.id} restarted while its crashed incarnation's file writes were ending`,
    );
    this.startBroker(b);
  }

  private moveLeader(p: number): void {
    const before = this.controller.states.get(p)!.leaderEpoch;
    this.controller.moveLeader(p, (candidates) => this.pick(candidates));
    if (this.controller.states.get(p)!.leaderEpoch !== before) this.leaderChanges++;
    else this.log(`move leader of p${p}: no candidate`);
  }

  /** An acks=all write of one record, sent where the controller says the leader is (now and then elsewhere). */
  private produce(): void {
    const p = this.random.nextInt(this.partitions);
    const s = this.controller.states.get(p)!;
    const target =
      s.leader >= 0 && this.random.nextInt(10) > 0
        ? s.leader
        : BROKER_IDS[this.random.nextInt(BROKER_IDS.length)]!;
    const value = `s${this.options.seed}-w${this.produced++}`;
    const b = this.brokers[target - 1]!;
    const part = b.partition(TOPIC, p);
    if (part === undefined) {
      this.log(`produce ${value} to p${p} at broker ${target}: not hosted`);
      return;
    }
    const incarnation = b.incarnation;
    const running = b.running!;
    let offset = -1;
    const inFlight = { broker: b, incarnation };
    this.producesInFlight.add(inFlight);
    void appendAsLeaderAndWait(
      { replicas: running.replicas, producePurgatory: running.purgatory },
      part,
      buildBatch([{ value }], { timestamp: this.clock.nowMs() }),
      {
        nowMs: this.clock.nowMs(),
        timeoutMs: PRODUCE_TIMEOUT_MS,
        fromClient: true,
        onAppended: (base) => {
          offset = base;
        },
      },
    ).then((code) => {
      this.producesInFlight.delete(inFlight);
      // A broker that crashed meanwhile never answered: its outcome is not the client's.
      if (b.incarnation !== incarnation) return;
      this.log(
        `produce ${value} to p${p} at broker ${target}: ${errorName(code)}${offset >= 0 ? ` at ${offset}` : ''}`,
      );
      if (code === ErrorCode.NONE) this.acked.push({ partition: p, offset, value });
    });
    this.log(`produce ${value} to p${p} at broker ${target} sent`);
  }

  // ---- messages ----

  private sendLeaderAndIsr(brokerId: number, states: ReadonlyMap<number, PartitionState>): void {
    const epoch = this.controller.live.get(brokerId) ?? -1;
    const summary = [...states].map(
      ([p, s]) => `p${p}:L${s.leader}e${s.leaderEpoch}${JSON.stringify(s.isr)}`,
    );
    this.network.send({
      label: `LeaderAndIsr controller->${brokerId} ${summary.join(' ')}`,
      fifoKey: `controller->${brokerId}`,
      droppable: false,
      deliver: () => {
        const b = this.brokers[brokerId - 1]!;
        // A request for an earlier run of the broker is refused (STALE_BROKER_EPOCH); a dead one answers nothing.
        if (b.running === null || this.registeredEpoch.get(brokerId) !== epoch) return;
        this.applyLeaderAndIsr(b.running, brokerId, epoch, states);
      },
      drop: () => {},
    });
  }

  private applyLeaderAndIsr(
    running: Incarnation,
    brokerId: number,
    brokerEpoch: number,
    states: ReadonlyMap<number, PartitionState>,
  ): void {
    const request: LeaderAndIsrRequest = {
      controllerId: 0,
      isKRaftController: false,
      controllerEpoch: 1,
      brokerEpoch: BigInt(brokerEpoch),
      type: 0,
      ungroupedPartitionStates: [],
      topicStates: [
        {
          topicName: TOPIC,
          topicId: TOPIC_ID,
          partitionStates: [...states].map(([p, s]) => ({
            topicName: TOPIC,
            partitionIndex: p,
            controllerEpoch: 1,
            leader: s.leader,
            leaderEpoch: s.leaderEpoch,
            isr: [...s.isr],
            partitionEpoch: s.partitionEpoch,
            replicas: [...s.replicas],
            addingReplicas: [],
            removingReplicas: [],
            isNew: false,
            leaderRecoveryState: 0,
          })),
        },
      ],
      liveLeaders: [],
    };
    running.replicas.becomeLeaderOrFollower(request);
    // As the broker does after every LeaderAndIsr: fetchers follow, waiting writes see the new leadership.
    running.fetchers.refresh();
    for (const p of states.keys()) running.purgatory.checkAndComplete(`${TOPIC}-${p}`);
    void brokerId;
  }

  private localController(b: SimBroker): LocalController {
    const sim = this;
    return {
      isActive: true,
      alterPartition(request: AlterPartitionRequest): Promise<AlterPartitionResponse> {
        return new Promise((resolve, reject) => {
          const timeout = (): void => {
            sim.clock.setTimer(SOCKET_TIMEOUT_MS, () => reject(new Error('AlterPartition timed out')));
          };
          const p = request.topics[0]?.partitions[0];
          sim.network.send({
            label: `AlterPartition ${b.id}->controller p${p?.partitionIndex} isr ${JSON.stringify(p?.newIsr)} e${p?.leaderEpoch}/${p?.partitionEpoch}`,
            droppable: true,
            deliver: () => {
              const response = sim.controller.alterPartition(request);
              const code = response.errorCode || (response.topics[0]?.partitions[0]?.errorCode ?? 0);
              sim.network.send({
                label: `AlterPartition answer controller->${b.id} ${errorName(code)}`,
                droppable: true,
                deliver: () => resolve(response),
                drop: timeout,
              });
            },
            drop: timeout,
          });
        });
      },
    } as unknown as LocalController;
  }

  // ---- the leader's side of replica fetches, in process ----

  leaderOf(leaderId: number): Incarnation | null {
    return this.brokers[leaderId - 1]?.running ?? null;
  }

  /** Sends a request of a fetcher's end point and its answer through the network (see SimLeaderEndPoint). */
  call<T>(
    label: string,
    timeoutMs: number,
    isClosed: () => boolean,
    leaderId: number,
    answer: (leader: Incarnation) => Promise<T> | T,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const fail = (why: string): void => {
        if (settled) return;
        settled = true;
        reject(new Error(why));
      };
      const timeout = (): void => {
        this.clock.setTimer(timeoutMs, () => fail(`${label}: no answer in ${timeoutMs} ms`));
      };
      this.network.send({
        label,
        droppable: true,
        deliver: () => {
          const leader = this.leaderOf(leaderId);
          if (leader === null) {
            fail(`${label}: connection refused`);
            return;
          }
          this.track(Promise.resolve(answer(leader))).then(
            (value) =>
              this.network.send({
                label: `answer to ${label}`,
                droppable: true,
                deliver: () => {
                  if (isClosed()) return;
                  settled = true;
                  resolve(value);
                },
                drop: timeout,
              }),
            (err: unknown) => fail(`${label}: ${String(err)}`),
          );
        },
        drop: timeout,
      });
    });
  }

  // ---- invariants ----

  private async checkInvariants(): Promise<void> {
    for (const b of this.brokers) {
      if (b.running === null) continue;
      for (let p = 0; p < this.partitions; p++) {
        const part = b.partition(TOPIC, p);
        if (part === undefined) continue;
        this.watchTruncations(b, p, part);
        const log = part.log;
        const key = `${b.id}/${b.incarnation}/${p}`;
        const before = this.lastSeen.get(key);
        if (log.highWatermark > log.logEndOffset)
          this.violations.push(
            `broker ${b.id} p${p}: high watermark ${log.highWatermark} past the log end ${log.logEndOffset}`,
          );
        if (before !== undefined && log.highWatermark < before.hw)
          this.violations.push(
            `broker ${b.id} p${p}: high watermark moved back from ${before.hw} to ${log.highWatermark}`,
          );
        if (before !== undefined && part.leaderEpoch < before.leaderEpoch)
          this.violations.push(
            `broker ${b.id} p${p}: leader epoch went back from ${before.leaderEpoch} to ${part.leaderEpoch}`,
          );
        this.lastSeen.set(key, {
          hw: Math.max(before?.hw ?? 0, log.highWatermark),
          leaderEpoch: part.leaderEpoch,
        });
        if (log.highWatermark > (this.committedHw.get(p) ?? 0)) this.committedHw.set(p, log.highWatermark);
      }
    }
    for (let p = 0; p < this.partitions; p++) await this.checkContents(p);
    this.log(this.stateLine());
    if (this.violations.length > 0) throw this.failure();
  }

  /** Acknowledged writes on every live ISR member, and ISR members' logs equal below their high watermarks. */
  private async checkContents(p: number): Promise<void> {
    const s = this.controller.states.get(p)!;
    const members: { id: number; log: Log; records: Map<number, string> }[] = [];
    for (const id of s.isr) {
      const part = this.brokers[id - 1]!.partition(TOPIC, p);
      if (part === undefined) continue;
      members.push({ id, log: part.log, records: await this.recordsOf(part.log) });
    }
    for (const w of this.acked) {
      if (w.partition !== p) continue;
      for (const m of members) {
        const found = m.records.get(w.offset);
        if (found !== w.value)
          this.violations.push(
            `acknowledged write ${w.value} at p${p} offset ${w.offset} lost on ISR member ${m.id} (holds ${found ?? 'nothing'} there, log end ${m.log.logEndOffset})`,
          );
      }
    }
    for (let i = 0; i < members.length; i++) {
      for (let j = i + 1; j < members.length; j++) {
        const a = members[i]!;
        const b = members[j]!;
        const below = Math.min(a.log.highWatermark, b.log.highWatermark);
        for (const [offset, value] of a.records) {
          if (offset >= below) continue;
          const other = b.records.get(offset);
          if (other !== undefined && other !== value)
            this.violations.push(
              `p${p}: ISR members ${a.id} and ${b.id} differ at offset ${offset} below the high watermark ${below} (${value} / ${other})`,
            );
        }
      }
    }
  }

  /** A log's records, read again only when its written end or its truncations changed since the last read. */
  private async recordsOf(log: Log): Promise<Map<number, string>> {
    const version = `${log.writtenEndOffset}/${log.truncationCount}/${log.logStartOffset}`;
    const cached = this.readCache.get(log);
    if (cached?.version === version) return cached.records;
    const records = await this.track(readLog(log));
    this.readCache.set(log, { version, records });
    return records;
  }

  /** Records each truncation of a log; an ISR member's truncation below the committed high watermark fails. */
  private watchTruncations(b: SimBroker, p: number, part: Partition): void {
    const log = part.log;
    if (this.watchedLogs.has(log)) return;
    this.watchedLogs.add(log);
    const original = log.truncateTo.bind(log);
    const originalFully = log.truncateFullyAndStartAt.bind(log);
    const record = (to: number, how: string): void => {
      this.truncations++;
      const committed = this.committedHw.get(p) ?? 0;
      const inIsr = this.controller.states.get(p)!.isr.includes(b.id);
      this.log(
        `broker ${b.id} p${p}: ${how} from ${log.logEndOffset} to ${to} (hw ${log.highWatermark}, committed ${committed})`,
      );
      if (inIsr && to < committed)
        this.violations.push(
          `broker ${b.id} p${p}: ISR member truncated to ${to}, below the committed high watermark ${committed}`,
        );
    };
    log.truncateTo = (offset: Offset) => {
      if (offset < log.logEndOffset) record(offset, 'truncate');
      original(offset);
    };
    log.truncateFullyAndStartAt = (offset: Offset) => {
      record(offset, 'truncate fully');
      originalFully(offset);
    };
  }

  // ---- trace ----

  log(line: string): void {
    this.trace.push(`#${this.step} t=${this.clock.monotonicMs()} ${line}`);
  }

  private stateLine(): string {
    const parts: string[] = [];
    for (const [p, s] of this.controller.states) {
      const replicas = this.brokers.map((b) => {
        const part = b.partition(TOPIC, p);
        if (!b.alive) return `${b.id}:down`;
        if (part === undefined) return `${b.id}:-`;
        return `${b.id}:${part.log.logEndOffset}/${part.log.highWatermark}${part.isLeader ? 'L' : ''}e${part.leaderEpoch}`;
      });
      parts.push(`p${p}[L${s.leader} e${s.leaderEpoch} isr${JSON.stringify(s.isr)} ${replicas.join(' ')}]`);
    }
    return `  state ${parts.join(' ')} acked ${this.acked.length} net ${this.network.size}`;
  }

  private failure(): SimulationFailure {
    const seed = this.options.seed;
    const tail = this.trace.slice(-TRACE_TAIL_LINES).join('\n');
    return new SimulationFailure(
      `data-plane simulation seed ${seed} failed at step ${this.step}:\n  ${this.violations.join('\n  ')}\n` +
        `replay: SIM_SEED=${seed} SIM_STEPS=${this.options.steps} node tools/run-tests.mjs data-plane.test\n` +
        `last ${TRACE_TAIL_LINES} of ${this.trace.length} trace lines:\n${tail}`,
      seed,
      this.trace,
    );
  }
}

/** A fetcher's view of a leader in the simulation: each call a message there and its answer a message back. */
class SimLeaderEndPoint implements LeaderEndPoint {
  private closed = false;

  constructor(
    private readonly sim: DataPlaneSimulation,
    private readonly from: number,
    private readonly incarnation: number,
    private readonly leaderId: number,
  ) {}

  private label(kind: string): string {
    return `${kind} ${this.from}.${this.incarnation}->${this.leaderId}`;
  }

  fetch(request: FetchRequest, timeoutMs: number): Promise<FetchResponse> {
    const what = request.topics
      .flatMap((t) =>
        t.partitions.map(
          (p) => `p${p.partition}@${p.fetchOffset}e${p.currentLeaderEpoch}/${p.lastFetchedEpoch}`,
        ),
      )
      .join(',');
    return this.sim.call(
      this.label(`Fetch[${what}]`),
      timeoutMs,
      () => this.closed,
      this.leaderId,
      (leader) => answerFetch(leader, request),
    );
  }

  fetchEpochEndOffsets(
    request: OffsetForLeaderEpochRequest,
    timeoutMs: number,
  ): Promise<OffsetForLeaderEpochResponse> {
    const what = request.topics
      .flatMap((t) => t.partitions.map((p) => `p${p.partition}e${p.currentLeaderEpoch}/${p.leaderEpoch}`))
      .join(',');
    return this.sim.call(
      this.label(`OffsetForLeaderEpoch[${what}]`),
      timeoutMs,
      () => this.closed,
      this.leaderId,
      (leader) => answerEpochEndOffsets(leader, request),
    );
  }

  fetchLatestOffset(topic: string, partition: number, currentLeaderEpoch: number): Promise<LeaderOffset> {
    return this.sim.call(
      this.label(`ListOffsets[p${partition} latest e${currentLeaderEpoch}]`),
      SOCKET_TIMEOUT_MS,
      () => this.closed,
      this.leaderId,
      (leader) => answerOffset(leader, topic, partition, currentLeaderEpoch, true),
    );
  }

  fetchEarliestOffset(topic: string, partition: number, currentLeaderEpoch: number): Promise<LeaderOffset> {
    return this.sim.call(
      this.label(`ListOffsets[p${partition} earliest e${currentLeaderEpoch}]`),
      SOCKET_TIMEOUT_MS,
      () => this.closed,
      this.leaderId,
      (leader) => answerOffset(leader, topic, partition, currentLeaderEpoch, false),
    );
  }

  close(): void {
    this.closed = true;
  }
}

const ERROR_NAMES = new Map(Object.entries(ErrorCode).map(([name, code]) => [code as number, name]));

function errorName(code: number): string {
  return ERROR_NAMES.get(code) ?? String(code);
}
