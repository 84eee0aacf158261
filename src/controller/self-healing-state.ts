// What self-healing must not forget when the controller changes, kept in one znode.
//
// Kafka's controller keeps nothing across a failover that is not in ZooKeeper: a new controller rebuilds its
// context from the store, and a reassignment in flight survives because adding/removing replicas are written in
// the topic's znode. Self-healing adds state of its own that the store did not hold: when a broker was seen to
// go (the timeout's start), which moves self-healing started (so a returning broker can cancel them, in their
// original replica order), which partitions an operator's cancel left on a gone broker (not to be moved again while
// it stays gone), and which throttle entries and rates it added (so they are taken off again, and only those).
// Cruise Control keeps its failed brokers and their failure times in ZooKeeper for the same reason (a restarted
// Cruise Control must not start the timeouts from zero). Times are wall-clock milliseconds: the new
// controller runs on another host, whose monotonic clock means nothing here.
//
// Only the active controller writes the node, always in a multi guarded by the controller epoch, so a replaced
// controller cannot overwrite its successor's state. A node that cannot be read (damaged, written by hand) is
// logged and treated as empty: healing then starts its clocks from the failover, as it did before this node.

import type { BrokerId, PartitionId } from '../common/ids.js';
import type { RegisteredBrokers } from './broker-registration.js';
import type { TopicPartition } from './context.js';
import { type Decoded, decodeJson, encodeJson, type JsonObject } from './zk-layout/index.js';

/** The znode, at the root as Cruise Control's /CruiseControlBrokerList is. */
export const SELF_HEALING_STATE_PATH = '/brook_self_healing';

export interface PersistedMove {
  readonly tp: TopicPartition;
  /** The replicas before the move, in their order. */
  readonly from: readonly BrokerId[];
  /**
   * The replicas self-healing moves to; a reassignment to another target replaced its move. Null when the node
   * was written before this was kept (the move then counts as self-healing's while it runs).
   */
  readonly to: readonly BrokerId[] | null;
}

export interface PersistedFailedBroker {
  /** Wall-clock milliseconds when the first controller that saw it gone noted it. */
  readonly failedAtMs: number;
  readonly moving: readonly PersistedMove[];
  /** Partitions whose move an operator cancelled: they stay on the broker while this failure lasts. */
  readonly operatorCancelled: readonly TopicPartition[];
}

export interface SelfHealingState {
  readonly brokers: ReadonlyMap<BrokerId, PersistedFailedBroker>;
  /** Per topic, the "partition:broker" entries self-healing added to the leader/follower throttled replicas. */
  readonly throttledTopics: ReadonlyMap<
    string,
    { readonly leader: readonly string[]; readonly follower: readonly string[] }
  >;
  /** Brokers on which self-healing set the throttled rates. */
  readonly ratedBrokers: readonly BrokerId[];
  /** The registered brokers when the node was written, with /brokers/ids' cversion; null when not known. */
  readonly registered: RegisteredBrokers | null;
}

/** Whether brokers registered and went between `before` and `after` beyond what the two sets show. */
export type { RegisteredBrokers };

export function unseenRegistrations(before: RegisteredBrokers, after: RegisteredBrokers): boolean {
  const was = new Set(before.live);
  const is = new Set(after.live);
  const differ = [...was].filter((b) => !is.has(b)).length + [...is].filter((b) => !was.has(b)).length;
  return after.cversion - before.cversion > differ;
}

export const EMPTY_SELF_HEALING_STATE: SelfHealingState = {
  brokers: new Map(),
  throttledTopics: new Map(),
  ratedBrokers: [],
  registered: null,
};

export function encodeSelfHealingState(state: SelfHealingState): Uint8Array {
  const brokers: Record<string, unknown> = {};
  for (const [id, b] of [...state.brokers].sort(([x], [y]) => x - y)) {
    brokers[String(id)] = {
      failed_at_ms: String(b.failedAtMs),
      moving: b.moving.map((m) => ({
        topic: m.tp.topic,
        partition: m.tp.partition,
        from: m.from,
        ...(m.to === null ? {} : { to: m.to }),
      })),
      operator_cancelled: b.operatorCancelled.map((tp) => ({ topic: tp.topic, partition: tp.partition })),
    };
  }
  const throttles: Record<string, unknown> = {};
  for (const [topic, t] of state.throttledTopics)
    throttles[topic] = { leader: t.leader, follower: t.follower };
  return encodeJson({
    version: 1,
    failed_brokers: brokers,
    throttled_topics: throttles,
    rated_brokers: state.ratedBrokers,
    ...(state.registered === null
      ? {}
      : { registered_brokers: { cversion: state.registered.cversion, live: state.registered.live } }),
  });
}

export function decodeSelfHealingState(bytes: Uint8Array): Decoded<SelfHealingState> {
  return decodeJson('self-healing state', bytes, (json: JsonObject) => {
    json.version([1]);
    const brokers = new Map<BrokerId, PersistedFailedBroker>();
    const failed = json.objectOrEmpty('failed_brokers');
    for (const key of failed.keys()) {
      if (!/^\d+$/.test(key)) failed.fail(key, 'is not a broker id');
      const b = failed.object(key);
      const moving = b.objectArray('moving').map((m) => ({
        tp: { topic: m.string('topic'), partition: m.int('partition', { min: 0 }) as PartitionId },
        from: m.intArray('from', { min: 0 }) as BrokerId[],
        to: m.has('to') ? (m.intArray('to', { min: 0 }) as BrokerId[]) : null,
      }));
      // Absent in nodes written before operators' cancels were kept.
      const operatorCancelled = b.has('operator_cancelled')
        ? b.objectArray('operator_cancelled').map((c) => ({
            topic: c.string('topic'),
            partition: c.int('partition', { min: 0 }) as PartitionId,
          }))
        : [];
      brokers.set(Number(key) as BrokerId, {
        failedAtMs: b.integerString('failed_at_ms'),
        moving,
        operatorCancelled,
      });
    }
    const throttledTopics = new Map<string, { leader: string[]; follower: string[] }>();
    const topics = json.objectOrEmpty('throttled_topics');
    for (const topic of topics.keys()) {
      const t = topics.object(topic);
      throttledTopics.set(topic, { leader: t.stringArray('leader'), follower: t.stringArray('follower') });
    }
    const ratedBrokers = json.has('rated_brokers')
      ? (json.intArray('rated_brokers', { min: 0 }) as BrokerId[])
      : [];
    // Absent in nodes written before it was kept.
    let registered: RegisteredBrokers | null = null;
    if (json.has('registered_brokers')) {
      const r = json.object('registered_brokers');
      registered = {
        cversion: r.int('cversion', { min: 0 }),
        live: r.intArray('live', { min: 0 }) as BrokerId[],
      };
    }
    return { brokers, throttledTopics, ratedBrokers, registered };
  });
}
