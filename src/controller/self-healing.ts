// Self-healing of broker failures (brook.self.healing.broker.failure.timeout.ms), what a managed Kafka service or
// Cruise Control's broker-failure detector does: once a broker has been gone for the timeout, the controller
// moves every replica it held to live brokers (rack-aware, onto the least loaded), through the ordinary
// reassignment machinery (KIP-455) and with replication throttles, so every partition gets back to its
// replication factor. A broker that comes back while its replicas are still moving cancels the moves not yet
// finished (they go back to the original replicas, the returning broker among them); moves already finished stay,
// and the broker rejoins without those replicas (a later `brook rebalance` gives it load again).
//
// Ownership: one SelfHealer per Controller; every method runs inside the controller's event queue (timers only
// enqueue events). What must survive a controller change is written to one znode (self-healing-state.ts) each
// time it changes: the wall-clock time each failed broker was first seen gone, the moves self-healing started
// (written before they start) and the throttle entries it added. A new controller reads it at failover: a broker
// still gone keeps its clock (the timer runs for what is left of the timeout, not the whole of it again), moves
// still running stay self-healing's (a broker that returns cancels them; finishing them takes the throttles off),
// and a broker that came back while no controller watched gets its unfinished moves cancelled at once. A broker
// missing at failover that the node does not name counts as gone from then, so without the node (or with it
// unreadable) a failover can only delay healing, never hasten it; so does one that may have been back and gone
// again while no controller watched (the node keeps the registered brokers to tell): its clock starts again.
//
// Throttles: the moving partitions' current replicas go into leader.replication.throttled.replicas and their
// new replicas into follower.replication.throttled.replicas (topic configs, merged with what is there), and
// leader/follower.replication.throttled.rate are set on the brokers involved that have no rate of their own;
// all of it is taken off again once nothing self-healing started is moving any more.

import type { BrokerId, PartitionId } from '../common/ids.js';
import { ErrorCode } from '../protocol/errors.js';
import { registeredBrokers } from './broker-registration.js';
import type { ControllerContext, TopicPartition } from './context.js';
import { type ControllerCore, partitionKey, sameList } from './controller-core.js';
import { isReassigning, targetReplicas } from './reassignment.js';
import { reassign } from './reassignment-requests.js';
import {
  decodeSelfHealingState,
  encodeSelfHealingState,
  type PersistedMove,
  type RegisteredBrokers,
  SELF_HEALING_STATE_PATH,
  type SelfHealingState,
  unseenRegistrations,
} from './self-healing-state.js';
import type { CoordinationStore, MultiResult, Op } from './store/store.js';
import {
  BROKER_IDS_PATH,
  brokerConfigPath,
  configChangeCreatePath,
  decodeEntityConfig,
  encodeConfigChange,
  encodeEntityConfig,
  topicConfigPath,
} from './zk-layout/index.js';

export interface SelfHealingOptions {
  /** brook.self.healing.broker.failure.timeout.ms: how long a broker may be gone before its replicas move; -1: never. */
  readonly brokerFailureTimeoutMs: number;
  /** brook.self.healing.replication.throttled.rate: bytes/s for the moves; -1: no throttle. */
  readonly throttledRateBytesPerSecond: number;
  /** The timer; default setTimeout, not keeping the process alive. Answers a function that cancels. */
  readonly schedule?: (run: () => void, delayMs: number) => () => void;
}

/** What the healer needs of its controller. */
export interface SelfHealingHost {
  readonly core: ControllerCore;
  /** Monotonic milliseconds. */
  monotonicMs(): number;
  /** Wall-clock milliseconds (the persisted failure times: another controller's monotonic clock differs). */
  nowMs(): number;
  /** The controller's current session, for reading configs. */
  store(): CoordinationStore;
  /** A write guarded by the controller epoch; `fenced` when another controller has taken over. */
  fencedMulti(ops: readonly Op[]): Promise<MultiResult | { readonly fenced: true }>;
  /** Runs `fn` as an event of the controller's queue. */
  enqueue(name: string, fn: () => Promise<void>): void;
}

export type FailedBrokerState = 'waiting' | 'healing' | 'healed' | 'stuck';

export interface FailedBrokerStatus {
  readonly brokerId: BrokerId;
  /** Monotonic milliseconds when it went (earlier than this controller's failover when a previous one saw it go). */
  readonly goneSinceMs: number;
  /** Wall-clock milliseconds when the first controller that saw it gone noted it (kept across failovers). */
  readonly failedAtMs: number;
  readonly state: FailedBrokerState;
  /** Partitions still moving away from it. */
  readonly moving: number;
}

/** What self-healing does for a partition with a replica on a gone broker (or a failed log directory). */
export type PartitionAction = 'waiting' | 'moving' | 'stuck' | 'off' | 'none';

/**
 * A partition missing a replica, with the reason and the action taken, as the report asks (logs,
 * metrics): offline when it has no live leader, else under-replicated.
 */
export interface UnhealthyPartition {
  readonly tp: TopicPartition;
  readonly state: 'offline' | 'under-replicated';
  readonly action: PartitionAction;
  /** For example "broker 3 gone since 2026-01-01T00:00:00.000Z". */
  readonly reason: string;
  /** For example "its replica moves at 2026-01-01T00:05:00.000Z unless broker 3 returns". */
  readonly detail: string;
}

export interface SelfHealingStatus {
  readonly enabled: boolean;
  readonly failedBrokers: readonly FailedBrokerStatus[];
  /** Partitions with a replica on a gone broker or an offline log directory, by topic and partition. */
  readonly partitions: readonly UnhealthyPartition[];
  /** Partition moves started since this broker became controller. */
  readonly movesStarted: number;
  /** Moves cancelled because the broker came back. */
  readonly movesCancelled: number;
  /** Moves that finished. */
  readonly movesFinished: number;
  /**
   * Moves an operator's reassignment ended elsewhere than their target: a cancel (AlterPartitionReassignments
   * with no replicas) or a reassignment that finished at once. Such a partition is not moved again while its
   * broker stays gone.
   */
  readonly movesOperatorCancelled: number;
  /** Moves ended by the deletion of their topic (they could never finish). */
  readonly movesTopicDeleted: number;
  /**
   * Moves away from brokers that came back whose cancel is not written yet (every attempt failed; tried again
   * every CANCEL_RETRY_MS, with a warning each time) or is being written by such a retry now.
   */
  readonly pendingCancels: number;
  /** Moves an operator's reassignment replaced with another target: theirs from then on. */
  readonly movesReplaced: number;
}

/** A failed broker whose replicas could not all move is looked at again this often (at most). */
const RETRY_INTERVAL_MS_MAX = 30_000;
/** Writes of one cancel of a returning broker's move, when the partition changed under the first. */
const CANCEL_ATTEMPTS = 3;
/** Cancels of a returning broker's moves that failed every attempt are tried again after this long. */
const CANCEL_RETRY_MS = 5_000;
/** Partitions named one by one in the log when a broker goes; the rest are counted. */
const LOGGED_PARTITIONS_MAX = 20;

const LEADER_THROTTLED = 'leader.replication.throttled.replicas';
const FOLLOWER_THROTTLED = 'follower.replication.throttled.replicas';
const RATE_KEYS = ['leader.replication.throttled.rate', 'follower.replication.throttled.rate'];

interface FailedBroker {
  readonly sinceMs: number;
  readonly failedAtMs: number;
  state: FailedBrokerState;
  cancelTimer: (() => void) | null;
  /** The timer set is a retry of partitions an earlier round could not move (see heal). */
  retrying: boolean;
  /** Partition key → the partition, its replicas before and its target, for the moves started away from a broker. */
  readonly moving: Map<string, PersistedMove>;
  /** Partition key → why its last round could not move the replica (no live broker to take it, ...). */
  readonly skipped: Map<string, string>;
  /** Partition key → a partition whose move an operator cancelled: it stays while this failure lasts. */
  readonly operatorCancelled: Map<string, TopicPartition>;
}

const iso = (ms: number): string => new Date(ms).toISOString();

function defaultSchedule(run: () => void, delayMs: number): () => void {
  const timer = setTimeout(run, delayMs);
  timer.unref();
  return () => clearTimeout(timer);
}

export class SelfHealer {
  private readonly failed = new Map<BrokerId, FailedBroker>();
  /**
   * Brokers back whose moves could not all be cancelled (every attempt failed): the moves left, tried again on a
   * timer until written or ended otherwise. Still self-healing's, and still named in the state node.
   */
  private readonly uncancelled = new Map<BrokerId, FailedBroker>();
  /** Brokers of `uncancelled` whose retry is writing now (out of that map meanwhile, see retryCancels). */
  private readonly retryingCancels = new Map<BrokerId, FailedBroker>();
  /** Throttle entries this healer added, per topic ("partition:broker"), and brokers whose rates it set. */
  private readonly addedThrottles = new Map<string, { leader: Set<string>; follower: Set<string> }>();
  /** Partitions whose moves an operator's reassignment replaced: their throttle entries are to be taken off. */
  private readonly replacedMoves: TopicPartition[] = [];
  private readonly ratedBrokers = new Set<BrokerId>();
  private movesStarted = 0;
  private movesCancelled = 0;
  private movesFinished = 0;
  private movesOperatorCancelled = 0;
  private movesTopicDeleted = 0;
  private movesReplaced = 0;
  /** Data version of the state znode as this controller last wrote or read it; null: absent (or not read yet). */
  private stateVersion: number | null = null;

  constructor(
    private readonly host: SelfHealingHost,
    private readonly options: SelfHealingOptions,
  ) {}

  get enabled(): boolean {
    return this.options.brokerFailureTimeoutMs >= 0;
  }

  status(): SelfHealingStatus {
    return {
      enabled: this.enabled,
      failedBrokers: [...this.failed].map(([brokerId, f]) => ({
        brokerId,
        goneSinceMs: f.sinceMs,
        failedAtMs: f.failedAtMs,
        state: f.state,
        moving: f.moving.size,
      })),
      partitions: this.partitionReport(),
      movesStarted: this.movesStarted,
      movesCancelled: this.movesCancelled,
      movesFinished: this.movesFinished,
      movesOperatorCancelled: this.movesOperatorCancelled,
      movesTopicDeleted: this.movesTopicDeleted,
      movesReplaced: this.movesReplaced,
      pendingCancels: [...new Set([...this.uncancelled.values(), ...this.retryingCancels.values()])].reduce(
        (n, f) => n + f.moving.size,
        0,
      ),
    };
  }

  /**
   * Every partition with a replica on a broker that is gone or in an offline log directory: offline when its
   * leader is not alive, else under-replicated; the reason names the broker (and since when it is gone), the
   * action what self-healing does about it.
   */
  partitionReport(): UnhealthyPartition[] {
    const ctx = this.host.core.ctx;
    if (ctx === null) return [];
    const out: UnhealthyPartition[] = [];
    for (const { topic, partition, entry } of ctx.allPartitions()) {
      if (ctx.isDeleting(topic)) continue;
      const tp = { topic, partition };
      const gone = entry.assignment.replicas.filter((r) => !ctx.liveBrokers.has(r));
      const dirs = entry.assignment.replicas.filter(
        (r) => ctx.liveBrokers.has(r) && ctx.isReplicaOffline(r, tp),
      );
      if (gone.length === 0 && dirs.length === 0) continue;
      const leader = entry.leadership?.leader ?? -1;
      const state = leader < 0 || !ctx.liveBrokers.has(leader as BrokerId) ? 'offline' : 'under-replicated';
      const reasons = gone.map((b) => {
        const f = this.failed.get(b);
        return f === undefined ? `broker ${b} gone` : `broker ${b} gone since ${iso(f.failedAtMs)}`;
      });
      if (dirs.length > 0) reasons.push(`log directory offline on broker ${dirs.join(',')}`);
      const { action, detail } = this.actionFor(tp, gone, entry.assignment.addingReplicas);
      out.push({ tp, state, action, reason: reasons.join('; '), detail });
    }
    return out;
  }

  private actionFor(
    tp: TopicPartition,
    gone: readonly BrokerId[],
    adding: readonly BrokerId[],
  ): { action: PartitionAction; detail: string } {
    if (gone.length === 0)
      return {
        action: 'none',
        detail: 'the replica stays offline until its directory is back or it is reassigned',
      };
    if (!this.enabled)
      return {
        action: 'off',
        detail:
          'none: self-healing is off (brook.self.healing.broker.failure.timeout.ms=-1); reassign by hand',
      };
    const key = partitionKey(tp);
    // A move in progress is the action, whichever gone broker it replaces (the others' rounds skip the partition
    // while it moves).
    if (gone.some((b) => this.failed.get(b)?.moving.has(key) === true))
      return { action: 'moving', detail: `moving to broker ${adding.join(',')}` };
    const kept = gone.find((b) => this.failed.get(b)?.operatorCancelled.has(key) === true);
    if (kept !== undefined)
      return {
        action: 'none',
        detail: `none: an operator cancelled its move; it stays on broker ${kept} unless reassigned by hand`,
      };
    for (const b of gone) {
      const f = this.failed.get(b);
      if (f === undefined) continue;
      const skipped = f.skipped.get(key);
      if (skipped !== undefined) return { action: 'stuck', detail: `not moved: ${skipped}; retrying` };
      if (f.state === 'waiting') {
        const atMs = f.failedAtMs + this.options.brokerFailureTimeoutMs;
        return { action: 'waiting', detail: `its replica moves at ${iso(atMs)} unless broker ${b} returns` };
      }
    }
    return { action: 'none', detail: 'none yet' };
  }

  /**
   * This broker became controller (its context is built and sent): what the previous controllers persisted is
   * taken over, and every other broker named in an assignment and not registered counts as gone now.
   */
  async onFailover(): Promise<void> {
    this.reset();
    const ctx = this.host.core.ctx;
    if (ctx === null || !this.enabled) return;
    const persisted = await this.readState();
    if (this.host.core.ctx !== ctx) return;
    const missing = new Set<BrokerId>();
    for (const { entry } of ctx.allPartitions())
      for (const r of entry.assignment.replicas) if (!ctx.liveBrokers.has(r)) missing.add(r);
    const returned: BrokerId[] = [];
    // A broker gone now that was registered when the node was written, or gone then too while brokers registered
    // and went unseen (which ones the store does not keep), may have been back since its failure: its timeout
    // counts from now, not from before it was back (this can delay healing, never hasten it).
    const before = persisted.registered;
    const registered = before === null ? null : await this.readRegistered();
    if (this.host.core.ctx !== ctx) return;
    const unseen = before !== null && registered !== null && unseenRegistrations(before, registered);
    for (const [id, p] of [...persisted.brokers].sort(([x], [y]) => x - y)) {
      const backSince = before?.live.includes(id) === true || unseen;
      const restart = backSince && !ctx.liveBrokers.has(id);
      if (restart)
        this.host.core.logger.info(
          `self-healing: broker ${id}, gone since ${iso(p.failedAtMs)}, may have been back while no controller ` +
            'ran: its failure time starts now',
        );
      const failedAtMs = restart ? this.host.nowMs() : p.failedAtMs;
      const elapsedMs = Math.max(0, this.host.nowMs() - failedAtMs);
      const f: FailedBroker = {
        sinceMs: this.host.monotonicMs() - elapsedMs,
        failedAtMs,
        state: 'waiting',
        cancelTimer: null,
        retrying: false,
        moving: new Map(),
        skipped: new Map(),
        operatorCancelled: new Map(),
      };
      // Only moves still running away from the broker count: the others finished, were cancelled or replaced, never
      // began or ended with their topic's deletion.
      for (const m of p.moving) {
        if (stillMoving(ctx, m, id)) f.moving.set(partitionKey(m.tp), m);
      }
      for (const tp of p.operatorCancelled) f.operatorCancelled.set(partitionKey(tp), tp);
      this.failed.set(id, f);
      if (ctx.liveBrokers.has(id)) {
        returned.push(id);
        continue;
      }
      const onBroker = [...ctx.allPartitions()].filter(({ entry }) => entry.assignment.replicas.includes(id));
      if (f.moving.size > 0) f.state = 'healing';
      const toMove = onBroker.filter(({ topic, partition }) => {
        const key = partitionKey({ topic, partition });
        return !f.moving.has(key) && !f.operatorCancelled.has(key);
      });
      if (f.moving.size === 0 && toMove.length === 0) f.state = 'healed';
      if (toMove.length > 0) {
        const leftMs = Math.max(0, this.options.brokerFailureTimeoutMs - elapsedMs);
        this.host.core.logger.info(
          `self-healing: broker ${id} has been gone ${Math.round(elapsedMs)} ms (noted by an earlier controller); its replicas move in ${Math.round(leftMs)} ms unless it returns`,
        );
        this.schedule(id, f, leftMs);
      } else if (f.moving.size > 0) {
        this.host.core.logger.info(
          `self-healing: taking over ${f.moving.size} moves away from failed broker ${id} started by an earlier controller`,
        );
      }
    }
    for (const [topic, t] of persisted.throttledTopics)
      this.addedThrottles.set(topic, { leader: new Set(t.leader), follower: new Set(t.follower) });
    for (const b of persisted.ratedBrokers) this.ratedBrokers.add(b);
    // Entries of partitions none of whose moves runs any more come off now: the previous controller may have
    // stopped after an operator replaced or cancelled a move and before it took that partition's entries off
    // (it kept that list in memory only). While other moves run, they would otherwise stay until those end.
    this.replacedMoves.push(...this.throttledWithoutMove());
    await this.releaseReplacedThrottles();
    if (this.host.core.ctx !== ctx) return;
    const fresh = [...missing].sort((a, b) => a - b).filter((id) => !this.failed.has(id));
    for (const id of fresh) this.noteGone(id);
    this.logPartitions(fresh);
    await this.persist();
    for (const id of returned) await this.noteBack(id);
    await this.clearThrottlesWhenIdle();
  }

  /** The controller resigned or stopped: forget everything (the next controller reads the persisted state). */
  reset(): void {
    for (const f of this.failed.values()) f.cancelTimer?.();
    for (const f of this.uncancelled.values()) f.cancelTimer?.();
    this.failed.clear();
    this.uncancelled.clear();
    this.retryingCancels.clear();
    this.addedThrottles.clear();
    this.replacedMoves.length = 0;
    this.ratedBrokers.clear();
    this.stateVersion = null;
  }

  /** Brokers went and came (a restart within the watch's reach is both: gone with its old epoch, back with a new one). */
  async onBrokersChanged(gone: readonly BrokerId[], back: readonly BrokerId[]): Promise<void> {
    const backSet = new Set(back);
    let noted = false;
    const fresh = gone.filter((id) => !backSet.has(id) && !this.failed.has(id));
    for (const id of gone) if (!backSet.has(id)) noted = this.noteGone(id) || noted;
    // After every gone broker is noted, so that each partition's reason names all of them.
    this.logPartitions(fresh);
    if (noted) await this.persist();
    for (const id of back) await this.noteBack(id);
    // A broker that (re)joined may be the candidate a waiting retry lacked: look again now, not in 30 s.
    if (back.length === 0) return;
    for (const [id, f] of this.failed) if (f.retrying && f.cancelTimer !== null) this.schedule(id, f, 0);
  }

  /**
   * A move of this healer ended (noteFinished, noteTopicDeleting or noteReassigned said so): the throttle entries
   * of replaced moves come off, the state is written again, and every throttle goes when idle.
   */
  async afterMoveFinished(): Promise<void> {
    await this.releaseReplacedThrottles();
    await this.persist();
    await this.clearThrottlesWhenIdle();
  }

  /**
   * A reassignment finished or was cancelled (whoever asked for it). Synchronous, as it runs inside the step that
   * finished the partition; answers whether it was one of this healer's moves, and then the controller queues
   * clearThrottlesWhenIdle as an event of its own.
   */
  noteFinished(tp: TopicPartition, replicas: readonly BrokerId[]): boolean {
    const key = partitionKey(tp);
    let touched = false;
    for (const [id, f] of this.failed) {
      const m = f.moving.get(key);
      if (m === undefined) continue;
      f.moving.delete(key);
      touched = true;
      if (m.to === null || sameList(m.to, replicas)) this.movesFinished++;
      else this.noteOperatorCancelled(id, f, tp, replicas);
      if (f.moving.size === 0 && f.state === 'healing') {
        f.state = 'healed';
        this.host.core.logger.info(
          `self-healing: every replica of failed broker ${id} has moved to live brokers; its partitions are back to their replication factor`,
        );
      }
    }
    for (const f of this.uncancelled.values()) {
      const m = f.moving.get(key);
      if (m === undefined) continue;
      // Ended before its cancel could be written: finished where it went, or where an operator put it.
      f.moving.delete(key);
      touched = true;
      if (m.to === null || sameList(m.to, replicas)) this.movesFinished++;
      else this.replacedMoves.push(tp);
    }
    return touched;
  }

  /**
   * An operator ended self-healing's move of `tp` away from broker `id` with other replicas than its target (a
   * cancel, Kafka's AlterPartitionReassignments with no replicas, goes back to the replicas before the move). It
   * is their decision: the partition is not moved again while this failure of the broker lasts (a retry round or
   * a new controller would otherwise undo the cancel), and the throttle entries of the move come off at once.
   */
  private noteOperatorCancelled(
    id: BrokerId,
    f: FailedBroker,
    tp: TopicPartition,
    replicas: readonly BrokerId[],
  ): void {
    this.movesOperatorCancelled++;
    this.replacedMoves.push(tp);
    if (replicas.includes(id)) f.operatorCancelled.set(partitionKey(tp), tp);
    this.host.core.logger.info(
      `self-healing: the move of ${tp.topic}-${tp.partition} away from broker ${id} was cancelled by an operator ` +
        `(replicas [${replicas.join(',')}]); it is not moved again while broker ${id} stays gone`,
    );
  }

  /**
   * The deletion of `topic` began. Its live replicas are deleted at once and a gone broker's only when that broker
   * returns, so a move of the topic never finishes: it is over for self-healing now (else the broker stays
   * `healing` and the throttles stay on every broker for as long as it is gone). Answers whether any move was
   * self-healing's; then the controller queues afterMoveFinished.
   */
  noteTopicDeleting(topic: string): boolean {
    let touched = false;
    for (const f of this.uncancelled.values())
      for (const [key, m] of f.moving)
        if (m.tp.topic === topic) {
          f.moving.delete(key);
          touched = true;
        }
    for (const [id, f] of this.failed) {
      const ended = [...f.moving].filter(([, m]) => m.tp.topic === topic).map(([key]) => key);
      if (ended.length === 0) continue;
      for (const key of ended) f.moving.delete(key);
      this.movesTopicDeleted += ended.length;
      touched = true;
      if (f.moving.size === 0 && f.state === 'healing') {
        f.state = 'healed';
        this.host.core.logger.info(
          `self-healing: the moves away from failed broker ${id} ended with the deletion of topic ${topic}`,
        );
      }
    }
    return touched;
  }

  /**
   * A reassignment of `tp` to `target` was written (whoever asked). When it replaces a move of this healer with
   * another target, the move is the operator's from then on: it leaves this healer's list (a broker that returns does
   * not cancel it, as noteBack already held), and the throttle entries this healer added for the partition come off
   * (an operator's reassignment runs with the throttles the operator sets). Answers whether a move left; then the
   * controller queues afterMoveFinished.
   */
  noteReassigned(tp: TopicPartition, target: readonly BrokerId[]): boolean {
    const key = partitionKey(tp);
    let touched = false;
    for (const [id, f] of this.failed) {
      const m = f.moving.get(key);
      if (m === undefined || m.to === null || sameList(m.to, target)) continue;
      f.moving.delete(key);
      this.movesReplaced++;
      this.replacedMoves.push(tp);
      touched = true;
      this.host.core.logger.info(
        `self-healing: the move of ${tp.topic}-${tp.partition} away from broker ${id} was replaced by a reassignment to [${target.join(',')}]; it is no longer self-healing's`,
      );
      if (f.moving.size === 0 && f.state === 'healing') f.state = 'healed';
    }
    return touched;
  }

  /** Answers whether the broker was new to the list (then the state must be written). */
  private noteGone(id: BrokerId): boolean {
    if (this.failed.has(id)) return false;
    const f: FailedBroker = {
      sinceMs: this.host.monotonicMs(),
      failedAtMs: this.host.nowMs(),
      state: 'waiting',
      cancelTimer: null,
      retrying: false,
      moving: new Map(),
      skipped: new Map(),
      operatorCancelled: new Map(),
    };
    // Moves whose cancel never got written still run away from the broker: they are its new failure's.
    const left = this.uncancelled.get(id);
    if (left !== undefined) {
      left.cancelTimer?.();
      this.uncancelled.delete(id);
      for (const [key, m] of left.moving) f.moving.set(key, m);
      if (f.moving.size > 0) f.state = 'healing';
    }
    this.failed.set(id, f);
    if (!this.enabled) return false;
    const timeoutMs = this.options.brokerFailureTimeoutMs;
    this.host.core.logger.info(
      `self-healing: broker ${id} is gone; its replicas move to live brokers if it is not back within ${timeoutMs} ms`,
    );
    this.schedule(id, f, timeoutMs);
    return true;
  }

  /** One line per partition (up to LOGGED_PARTITIONS_MAX) that lost a replica with the brokers just gone. */
  private logPartitions(ids: readonly BrokerId[]): void {
    if (ids.length === 0) return;
    const hit = this.partitionReport().filter((p) =>
      ids.some((id) => this.host.core.ctx?.partition(p.tp)?.assignment.replicas.includes(id) === true),
    );
    for (const p of hit.slice(0, LOGGED_PARTITIONS_MAX)) {
      const log = p.state === 'offline' ? this.host.core.logger.warn : this.host.core.logger.info;
      log.call(
        this.host.core.logger,
        `partition ${p.tp.topic}-${p.tp.partition} is ${p.state}: ${p.reason}; action: ${p.detail}`,
      );
    }
    if (hit.length > LOGGED_PARTITIONS_MAX)
      this.host.core.logger.info(
        `... and ${hit.length - LOGGED_PARTITIONS_MAX} more partitions with a replica on broker ${ids.join(',')}`,
      );
  }

  private schedule(id: BrokerId, f: FailedBroker, delayMs: number, retrying = false): void {
    f.cancelTimer?.();
    f.retrying = retrying;
    f.cancelTimer = (this.options.schedule ?? defaultSchedule)(() => {
      this.host.enqueue(`selfHealing ${id}`, () => this.heal(id));
    }, delayMs);
  }

  /**
   * Broker `id` registered again: its moves still running as self-healing started them go back to the replicas
   * from before. The state node names the broker until the cancels are written, so a successor can finish them.
   */
  private async noteBack(id: BrokerId): Promise<void> {
    const f = this.failed.get(id);
    if (f === undefined) return;
    f.cancelTimer?.();
    this.failed.delete(id);
    const ctx = this.host.core.ctx;
    if (ctx === null || f.moving.size === 0) {
      await this.persist();
      if (f.state !== 'waiting') this.host.core.logger.info(`self-healing: broker ${id} is back`);
      return;
    }
    // A move an operator's reassignment replaced is theirs now: it is left to end where they asked.
    const pending = [...f.moving.values()].filter((m) => stillMoving(ctx, m, id));
    const replaced = f.moving.size - pending.length;
    if (replaced > 0)
      this.host.core.logger.info(
        `self-healing: ${replaced} moves away from broker ${id} are no longer its own (another reassignment replaced them); not cancelled`,
      );
    this.host.core.logger.info(
      `self-healing: broker ${id} is back before its replicas finished moving; cancelling ${pending.length} moves`,
    );
    await this.cancelMoves(id, f, ctx, pending);
  }

  /**
   * Cancels `pending`, moves away from broker `id` (back), and writes the state. A cancel that fails every attempt
   * is not dropped: the move would otherwise finish without the broker, with no one left to cancel it. It stays
   * with the broker in `uncancelled` (and in the state node, for a successor) and is tried again on a timer.
   */
  private async cancelMoves(
    id: BrokerId,
    f: FailedBroker,
    ctx: ControllerContext,
    pending: readonly PersistedMove[],
  ): Promise<void> {
    const left: PersistedMove[] = [];
    for (const m of pending) {
      const { tp, from } = m;
      // Back to the replicas as they were, in their order (a plain cancel would put the returning broker last
      // and so change the preferred leader). A write that found the partition changed (an ISR change raced it,
      // or the link dropped) is tried again on the state read back, while the move still runs as it was.
      let problem: Awaited<ReturnType<typeof reassign>> = null;
      for (let attempt = 0; attempt < CANCEL_ATTEMPTS; attempt++) {
        if (this.host.core.ctx !== ctx) return;
        if (attempt > 0 && !stillMoving(ctx, m, id)) break;
        problem = await reassign(this.host.core, tp, [...from]);
        if (problem?.errorCode !== ErrorCode.REQUEST_TIMED_OUT) break;
      }
      if (problem === null) this.movesCancelled++;
      else {
        this.host.core.logger.warn(
          `self-healing: cancelling the move of ${tp.topic}-${tp.partition}: ${problem.errorMessage}`,
        );
        if (stillMoving(ctx, m, id)) left.push(m);
      }
    }
    f.moving.clear();
    for (const m of left) f.moving.set(partitionKey(m.tp), m);
    if (left.length > 0) {
      this.uncancelled.set(id, f);
      this.host.core.logger.warn(
        `self-healing: ${left.length} cancels of moves away from broker ${id} (back) are not written; ` +
          `trying again in ${CANCEL_RETRY_MS} ms`,
      );
      f.cancelTimer = (this.options.schedule ?? defaultSchedule)(() => {
        this.host.enqueue(`selfHealingCancel ${id}`, () => this.retryCancels(id));
      }, CANCEL_RETRY_MS);
    }
    // Only now does the node stop naming the broker: a controller that dies before its cancels are written
    // leaves a node from which its successor, finding the broker back, cancels what still moves.
    await this.persist();
    await this.clearThrottlesWhenIdle();
  }

  /** The timer of a returned broker's unwritten cancels fired: those of moves still running are tried again. */
  private async retryCancels(id: BrokerId): Promise<void> {
    const f = this.uncancelled.get(id);
    const ctx = this.host.core.ctx;
    if (f === undefined || ctx === null || !ctx.liveBrokers.has(id)) return;
    f.cancelTimer = null;
    // Out of the list while written: the cancel's own finishing is no move ending elsewhere (noteFinished).
    this.uncancelled.delete(id);
    this.retryingCancels.set(id, f);
    const pending = [...f.moving.values()].filter((m) => stillMoving(ctx, m, id));
    try {
      await this.cancelMoves(id, f, ctx, pending);
    } finally {
      this.retryingCancels.delete(id);
    }
    if (this.host.core.ctx === ctx && !this.uncancelled.has(id))
      this.host.core.logger.info(
        `self-healing: the moves away from broker ${id} (back) are cancelled or ended`,
      );
  }

  /** The timer of a failed broker fired: moves its replicas if it is still gone. */
  async heal(id: BrokerId): Promise<void> {
    const core = this.host.core;
    const ctx = core.ctx;
    const f = this.failed.get(id);
    if (ctx === null || f === undefined || ctx.liveBrokers.has(id)) return;
    f.cancelTimer = null;
    const goneMs = Math.round(this.host.monotonicMs() - f.sinceMs);
    const timeoutMs = this.options.brokerFailureTimeoutMs;
    const expired = (b: BrokerId): boolean => {
      const other = this.failed.get(b);
      return other !== undefined && this.host.monotonicMs() - other.sinceMs >= timeoutMs;
    };
    // A move of self-healing's own whose new replica is on this broker is planned again from its target.
    const ownMove = (tp: TopicPartition) => this.ownerOf(ctx, tp) !== null;
    const cancelledByOperator = (tp: TopicPartition) => f.operatorCancelled.has(partitionKey(tp));
    const plan = planReplacements(ctx, id, expired, ownMove, cancelledByOperator);
    if (plan.moves.length === 0 && plan.skipped.length === 0) {
      if (f.moving.size === 0) f.state = 'healed';
      return;
    }
    f.state = 'healing';
    core.logger.info(
      `self-healing: broker ${id} has been gone ${goneMs} ms (timeout ${this.options.brokerFailureTimeoutMs} ms); moving ${plan.moves.length} of its replicas to live brokers`,
    );
    // The moves are written down before they start (with the throttles), so a controller that takes over
    // mid-way knows them as self-healing's; one that never started is dropped at failover (not reassigning).
    // A move planned again stays its first owner's, with its replicas from before the first move: that broker
    // returning cancels it back to them.
    const owners = new Map<string, { moving: FailedBroker['moving']; before: PersistedMove | undefined }>();
    for (const m of plan.moves) {
      const key = partitionKey(m.tp);
      const owner = this.ownerOf(ctx, m.tp) ?? f;
      const before = owner.moving.get(key);
      owners.set(key, { moving: owner.moving, before });
      owner.moving.set(key, { tp: m.tp, from: before?.from ?? m.from, to: [...m.target] });
    }
    await this.setThrottles(plan.moves);
    await this.persist();
    for (const m of plan.moves) {
      if (core.ctx !== ctx) return;
      const key = partitionKey(m.tp);
      const { moving, before } = owners.get(key)!;
      const problem = await reassign(core, m.tp, m.target);
      const entry = ctx.partition(m.tp);
      if (problem !== null) {
        if (before === undefined) moving.delete(key);
        else moving.set(key, before);
        plan.skipped.push({ tp: m.tp, reason: problem.errorMessage ?? `error ${problem.errorCode}` });
        continue;
      }
      this.movesStarted++;
      core.logger.info(
        `self-healing: ${m.tp.topic}-${m.tp.partition} [${m.from.join(',')}] -> [${m.target.join(',')}] (replacing failed broker ${id})`,
      );
      // A move that finished at once was taken off the list by noteFinished already.
      if (entry === undefined || !isReassigning(entry.assignment)) moving.delete(key);
    }
    f.skipped.clear();
    for (const s of plan.skipped) {
      f.skipped.set(partitionKey(s.tp), s.reason);
      core.logger.warn(
        `self-healing: ${s.tp.topic}-${s.tp.partition} keeps its replica on failed broker ${id}: ${s.reason}`,
      );
    }
    if (plan.skipped.length > 0) {
      f.state = f.moving.size > 0 ? 'healing' : 'stuck';
      this.schedule(
        id,
        f,
        Math.min(RETRY_INTERVAL_MS_MAX, Math.max(1000, this.options.brokerFailureTimeoutMs)),
        true,
      );
    } else if (f.moving.size === 0) {
      f.state = 'healed';
      core.logger.info(`self-healing: every replica of failed broker ${id} has moved to live brokers`);
    }
    await this.persist();
    await this.clearThrottlesWhenIdle();
  }

  /** The failed broker whose self-healing move of `tp` still runs as it was started; null when none. */
  private ownerOf(ctx: ControllerContext, tp: TopicPartition): FailedBroker | null {
    const key = partitionKey(tp);
    for (const [id, f] of [...this.failed, ...this.uncancelled]) {
      const m = f.moving.get(key);
      if (m !== undefined && stillMoving(ctx, m, id)) return f;
    }
    return null;
  }

  // ---- throttles ------------------------------------------------------------------------------------------

  private async setThrottles(moves: readonly Move[]): Promise<void> {
    const rate = this.options.throttledRateBytesPerSecond;
    const ctx = this.host.core.ctx;
    if (rate < 0 || moves.length === 0 || ctx === null) return;
    const byTopic = new Map<string, { leader: Set<string>; follower: Set<string> }>();
    const brokers = new Set<BrokerId>();
    for (const m of moves) {
      const t = byTopic.get(m.tp.topic) ?? { leader: new Set<string>(), follower: new Set<string>() };
      byTopic.set(m.tp.topic, t);
      for (const b of m.from) {
        if (!ctx.liveBrokers.has(b)) continue;
        t.leader.add(`${m.tp.partition}:${b}`);
        brokers.add(b);
      }
      for (const b of m.target) {
        if (m.from.includes(b)) continue;
        t.follower.add(`${m.tp.partition}:${b}`);
        brokers.add(b);
      }
    }
    for (const [topic, entries] of byTopic) {
      const added = this.addedThrottles.get(topic) ?? {
        leader: new Set<string>(),
        follower: new Set<string>(),
      };
      const ok = await this.updateConfig(topicConfigPath(topic), `topics/${topic}`, (config) => {
        const leader = addEntries(config[LEADER_THROTTLED], entries.leader, added.leader);
        const follower = addEntries(config[FOLLOWER_THROTTLED], entries.follower, added.follower);
        return { ...config, [LEADER_THROTTLED]: leader, [FOLLOWER_THROTTLED]: follower };
      });
      if (ok) this.addedThrottles.set(topic, added);
    }
    for (const b of brokers) {
      if (this.ratedBrokers.has(b)) continue;
      let set = false;
      const ok = await this.updateConfig(brokerConfigPath(b), `brokers/${b}`, (config) => {
        // A rate an operator set is theirs: it stays, and stays theirs to remove.
        if (RATE_KEYS.some((k) => config[k] !== undefined)) return null;
        set = true;
        return { ...config, ...Object.fromEntries(RATE_KEYS.map((k) => [k, String(rate)])) };
      });
      if (ok && set) this.ratedBrokers.add(b);
    }
    this.host.core.logger.info(
      `self-healing: replication throttled to ${rate} B/s on brokers [${[...brokers].sort((a, b) => a - b).join(',')}] while replicas move`,
    );
  }

  /**
   * Takes off the topic throttle entries this healer added for the partitions of replaced or cancelled moves. A
   * partition whose write failed stays listed for the next round.
   */
  private async releaseReplacedThrottles(): Promise<void> {
    const replaced = this.replacedMoves.splice(0);
    for (const tp of replaced) {
      const added = this.addedThrottles.get(tp.topic);
      if (added === undefined) continue;
      const ofPartition = (entries: Set<string>) =>
        new Set([...entries].filter((e) => e.startsWith(`${tp.partition}:`)));
      const leader = ofPartition(added.leader);
      const follower = ofPartition(added.follower);
      if (leader.size === 0 && follower.size === 0) continue;
      const ok = await this.updateConfig(topicConfigPath(tp.topic), `topics/${tp.topic}`, (config) => {
        const next = { ...config };
        for (const [key, mine] of [
          [LEADER_THROTTLED, leader],
          [FOLLOWER_THROTTLED, follower],
        ] as const) {
          const rest = removeEntries(config[key], mine);
          if (rest === null) delete next[key];
          else next[key] = rest;
        }
        return next;
      });
      if (!ok) {
        this.replacedMoves.push(tp);
        continue;
      }
      for (const e of leader) added.leader.delete(e);
      for (const e of follower) added.follower.delete(e);
      if (added.leader.size === 0 && added.follower.size === 0) this.addedThrottles.delete(tp.topic);
    }
  }

  /** Partitions with throttle entries of this healer and no move of it running (none of any failed broker). */
  private throttledWithoutMove(): TopicPartition[] {
    const running = new Set<string>();
    for (const f of [...this.failed.values(), ...this.uncancelled.values()])
      for (const key of f.moving.keys()) running.add(key);
    const out: TopicPartition[] = [];
    for (const [topic, added] of this.addedThrottles) {
      const partitions = new Set(
        [...added.leader, ...added.follower].map((e) => Number(e.slice(0, e.indexOf(':')))),
      );
      for (const partition of [...partitions].sort((a, b) => a - b)) {
        const tp = { topic, partition: partition as PartitionId };
        if (!running.has(partitionKey(tp))) out.push(tp);
      }
    }
    return out;
  }

  /** Takes off the throttles this healer set once none of its moves is left. */
  async clearThrottlesWhenIdle(): Promise<void> {
    for (const f of [...this.failed.values(), ...this.uncancelled.values()]) if (f.moving.size > 0) return;
    if (this.addedThrottles.size === 0 && this.ratedBrokers.size === 0) return;
    for (const [topic, added] of [...this.addedThrottles]) {
      const ok = await this.updateConfig(topicConfigPath(topic), `topics/${topic}`, (config) => {
        const next = { ...config };
        for (const [key, mine] of [
          [LEADER_THROTTLED, added.leader],
          [FOLLOWER_THROTTLED, added.follower],
        ] as const) {
          const rest = removeEntries(config[key], mine);
          if (rest === null) delete next[key];
          else next[key] = rest;
        }
        return next;
      });
      if (ok) this.addedThrottles.delete(topic);
    }
    for (const b of [...this.ratedBrokers]) {
      const ok = await this.updateConfig(brokerConfigPath(b), `brokers/${b}`, (config) => {
        const next = { ...config };
        for (const k of RATE_KEYS) delete next[k];
        return next;
      });
      if (ok) this.ratedBrokers.delete(b);
    }
    await this.persist();
    this.host.core.logger.info('self-healing: replication throttles removed');
  }

  // ---- persisted state ------------------------------------------------------------------------------------

  private async readState(): Promise<SelfHealingState> {
    const empty: SelfHealingState = {
      brokers: new Map(),
      throttledTopics: new Map(),
      ratedBrokers: [],
      registered: null,
    };
    const node = await this.host.store().get(SELF_HEALING_STATE_PATH);
    if (!node.ok) {
      if (node.code !== 'NONODE')
        this.host.core.logger.warn(`self-healing: reading ${SELF_HEALING_STATE_PATH} failed: ${node.code}`);
      this.stateVersion = null;
      return empty;
    }
    this.stateVersion = node.value.stat.version;
    const decoded = decodeSelfHealingState(node.value.data);
    if (decoded.ok) return decoded.value;
    this.host.core.logger.error(
      `self-healing: ignoring ${SELF_HEALING_STATE_PATH}: ${decoded.error.message}; failure times start from now`,
    );
    return empty;
  }

  /** The registered brokers and /brokers/ids' cversion now, in one read; null when it could not be read. */
  private async readRegistered(): Promise<RegisteredBrokers | null> {
    const children = await this.host.store().childrenWithStat(BROKER_IDS_PATH);
    return children.ok ? registeredBrokers(children.value) : null;
  }

  /** Writes what this healer knows, guarded by the controller epoch (a replaced controller writes nothing). */
  private async persist(): Promise<void> {
    const ctx = this.host.core.ctx;
    if (!this.enabled || ctx === null) return;
    // What the controller's own watched read of /brokers/ids saw, the view this state was decided on: a change
    // since is a change after the write for a successor comparing (see unseenRegistrations), as it should be.
    const registered = ctx.registeredBrokers;
    const data = encodeSelfHealingState({
      // A broker back whose cancels are not all written stays named: a successor finds it back and cancels them.
      brokers: new Map(
        [...this.uncancelled, ...this.failed].map(([id, f]) => [
          id,
          {
            failedAtMs: f.failedAtMs,
            moving: [...f.moving.values()],
            operatorCancelled: [...f.operatorCancelled.values()],
          },
        ]),
      ),
      throttledTopics: new Map(
        [...this.addedThrottles].map(([t, a]) => [t, { leader: [...a.leader], follower: [...a.follower] }]),
      ),
      ratedBrokers: [...this.ratedBrokers].sort((a, b) => a - b),
      registered,
    });
    for (let attempt = 0; attempt < 3; attempt++) {
      const write: Op =
        this.stateVersion === null
          ? { op: 'create', path: SELF_HEALING_STATE_PATH, data, mode: 'persistent' }
          : { op: 'set', path: SELF_HEALING_STATE_PATH, data, version: this.stateVersion };
      const result = await this.host.fencedMulti([write]);
      if ('fenced' in result) return;
      if (result.ok) {
        const r = result.value[1];
        this.stateVersion = r?.op === 'set' ? r.stat.version : 0;
        return;
      }
      // Written by hand meanwhile (or created by a write whose answer was lost): take its version and write again.
      const node = await this.host.store().exists(SELF_HEALING_STATE_PATH);
      if (!node.ok) break;
      this.stateVersion = node.value === null ? null : node.value.version;
    }
    this.host.core.logger.warn(`self-healing: could not write ${SELF_HEALING_STATE_PATH}`);
  }

  /**
   * Read-modify-write of one config entity, with the change notification every broker watches, guarded by the
   * controller epoch. `change` answers null to leave it as it is. Answers whether the entity is as wanted.
   */
  private async updateConfig(
    path: string,
    entityPath: string,
    change: (config: Record<string, string>) => Record<string, string> | null,
  ): Promise<boolean> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const node = await this.host.store().get(path);
      if (!node.ok && node.code !== 'NONODE') return false;
      let current: Record<string, string> = {};
      if (node.ok && node.value.data.length > 0) {
        const decoded = decodeEntityConfig(node.value.data);
        if (!decoded.ok) return false;
        current = decoded.value;
      }
      const next = change(current);
      if (next === null) return true;
      // Nothing to write where there is no node (a deleted topic's throttles): creating one would outlive it.
      if (!node.ok && Object.keys(next).length === 0) return true;
      const data = encodeEntityConfig(next);
      const write: Op = node.ok
        ? { op: 'set', path, data, version: node.value.stat.version }
        : { op: 'create', path, data, mode: 'persistent' };
      const result = await this.host.fencedMulti([
        write,
        {
          op: 'create',
          path: configChangeCreatePath(),
          data: encodeConfigChange({ entityPath }),
          mode: 'persistent_sequential',
        },
      ]);
      if ('fenced' in result) return false;
      if (result.ok) return true;
      // BADVERSION or NODEEXISTS: someone wrote meanwhile; read again.
    }
    this.host.core.logger.warn(`self-healing: could not update the throttles in ${path}`);
    return false;
  }
}

/**
 * True while self-healing's move `m` away from `broker` still runs as it was started: the partition is being
 * reassigned to the move's target (not to another one an operator asked for since), and not being deleted.
 */
function stillMoving(ctx: ControllerContext, m: PersistedMove, broker: BrokerId): boolean {
  const entry = ctx.partition(m.tp);
  if (entry === undefined || !isReassigning(entry.assignment) || ctx.isDeleting(m.tp.topic)) return false;
  if (!entry.assignment.replicas.includes(broker)) return false;
  const target = targetReplicas(entry.assignment);
  return m.to === null || (target.length === m.to.length && target.every((r, i) => r === m.to![i]));
}

function addEntries(existing: string | undefined, entries: ReadonlySet<string>, added: Set<string>): string {
  if (existing?.trim() === '*') return '*';
  const list = parseList(existing);
  for (const e of entries) {
    if (list.includes(e)) continue;
    list.push(e);
    added.add(e);
  }
  return list.join(',');
}

/** The list without `mine`; null when nothing is left. */
function removeEntries(existing: string | undefined, mine: ReadonlySet<string>): string | null {
  const rest = parseList(existing).filter((e) => !mine.has(e));
  return rest.length === 0 ? null : rest.join(',');
}

function parseList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

// ---- planning ------------------------------------------------------------------------------------------------

export interface Move {
  readonly tp: TopicPartition;
  readonly from: readonly BrokerId[];
  readonly target: BrokerId[];
}

interface PlanContext {
  readonly liveBrokers: ReadonlyMap<BrokerId, { readonly registration: { readonly rack: string | null } }>;
  allPartitions(): Iterable<
    TopicPartition & {
      entry: {
        assignment: {
          replicas: readonly BrokerId[];
          addingReplicas: readonly BrokerId[];
          removingReplicas: readonly BrokerId[];
        };
      };
    }
  >;
  isDeleting(topic: string): boolean;
}

/**
 * For each partition with a replica on `failed`, the replica set with that replica replaced by a live broker that
 * holds none of the partition: first one whose rack none of the partition's other replicas use, then the one
 * holding the fewest replicas (counting the moves already planned), then the lowest id. Partitions being moved
 * or deleted are skipped, as are those with no candidate (fewer live brokers than the replication factor).
 * A partition that also has a replica on another gone broker is moved off both at once when that broker's
 * timeout has ended too (`expired`): a reassignment finishes only once every target replica is in the ISR, so
 * replacing one at a time would leave a move waiting for the other gone broker. While the other's timeout runs,
 * the partition waits for it. A move of self-healing's own (`ownMove`) whose new replica is on `failed` is planned
 * again from its target, since it could finish only once that broker returned. A partition whose move an operator
 * cancelled (`cancelledByOperator`) stays where they left it.
 */
export function planReplacements(
  ctx: PlanContext,
  failed: BrokerId,
  expired: (broker: BrokerId) => boolean = () => false,
  ownMove: (tp: TopicPartition) => boolean = () => false,
  cancelledByOperator: (tp: TopicPartition) => boolean = () => false,
): { moves: Move[]; skipped: { tp: TopicPartition; reason: string }[] } {
  const load = new Map<BrokerId, number>();
  for (const id of ctx.liveBrokers.keys()) load.set(id, 0);
  const affected: { tp: TopicPartition; replicas: readonly BrokerId[]; holding: readonly BrokerId[] }[] = [];
  const skipped: { tp: TopicPartition; reason: string }[] = [];
  for (const { topic, partition, entry } of ctx.allPartitions()) {
    const a = entry.assignment;
    for (const r of a.replicas) if (load.has(r)) load.set(r, load.get(r)! + 1);
    if (!a.replicas.includes(failed) || ctx.isDeleting(topic)) continue;
    const tp = { topic, partition };
    if (cancelledByOperator(tp)) continue;
    if (a.addingReplicas.length > 0 || a.removingReplicas.length > 0) {
      // Self-healing's own move to the failed broker could finish only once it returns: its target is planned
      // again (every broker of the reassignment kept out of the choice).
      if (a.addingReplicas.includes(failed) && ownMove(tp)) {
        const target = a.replicas.filter((r) => !a.removingReplicas.includes(r));
        affected.push({ tp, replicas: target, holding: a.replicas });
      } else skipped.push({ tp, reason: 'a reassignment is in progress' });
      continue;
    }
    affected.push({ tp, replicas: a.replicas, holding: a.replicas });
  }
  affected.sort((x, y) =>
    x.tp.topic === y.tp.topic ? x.tp.partition - y.tp.partition : x.tp.topic < y.tp.topic ? -1 : 1,
  );
  const rackOf = (b: BrokerId) => ctx.liveBrokers.get(b)?.registration.rack ?? null;
  const moves: Move[] = [];
  for (const { tp, replicas, holding } of affected) {
    const gone = replicas.filter((r) => r !== failed && !ctx.liveBrokers.has(r));
    const waiting = gone.filter((r) => !expired(r));
    if (waiting.length > 0) {
      skipped.push({
        tp,
        reason: `broker ${waiting.join(',')} is gone too and still within its timeout; both move when it ends`,
      });
      continue;
    }
    const replaced = new Set([failed, ...gone]);
    const usedRacks = new Set(
      replicas
        .filter((r) => !replaced.has(r))
        .map(rackOf)
        .filter((r): r is string => r !== null),
    );
    const candidates = [...ctx.liveBrokers.keys()].filter((b) => !holding.includes(b));
    if (candidates.length < replaced.size) {
      skipped.push({ tp, reason: 'no live broker outside the partition to take the replica' });
      continue;
    }
    const chosen = new Map<BrokerId, BrokerId>();
    for (const r of replicas) {
      if (!replaced.has(r)) continue;
      const free = candidates.filter((b) => ![...chosen.values()].includes(b));
      free.sort((x, y) => {
        const rx = rackOf(x);
        const ry = rackOf(y);
        const newRack = Number(rx !== null && usedRacks.has(rx)) - Number(ry !== null && usedRacks.has(ry));
        if (newRack !== 0) return newRack;
        const byLoad = load.get(x)! - load.get(y)!;
        return byLoad !== 0 ? byLoad : x - y;
      });
      const pick = free[0]!;
      chosen.set(r, pick);
      load.set(pick, load.get(pick)! + 1);
      const rack = rackOf(pick);
      if (rack !== null) usedRacks.add(rack);
    }
    // The replacement takes the failed replica's place, so the preferred leader order is otherwise kept.
    const target = replicas.map((r) => chosen.get(r) ?? r);
    moves.push({ tp: { topic: tp.topic, partition: tp.partition as PartitionId }, from: replicas, target });
  }
  return { moves, skipped };
}
