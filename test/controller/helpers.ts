// Shared pieces of the controller tests: an in-memory store with registered brokers, and a channel that
// records what the controller sent and answers like a healthy broker.

import { ManualClock } from '../../src/common/clock.js';
import type { BrokerId } from '../../src/common/ids.js';
import { registerBroker } from '../../src/controller/broker-registration.js';
import type { BrokerChannel } from '../../src/controller/channel.js';
import { Controller } from '../../src/controller/controller.js';
import { seededRandom } from '../../src/controller/random.js';
import { InProcessStore } from '../../src/controller/store/in-process-store.js';
import type {
  CoordinationStore,
  MultiResult,
  NodeData,
  Op,
  SessionEvent,
  SessionListener,
  Stat,
  StoreResult,
  Watcher,
} from '../../src/controller/store/store.js';
import { TopicAdmin } from '../../src/controller/topic-admin.js';
import {
  type BrokerRegistration,
  decodePartitionState,
  type PartitionState,
  partitionStatePath,
} from '../../src/controller/zk-layout/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type {
  LeaderAndIsrRequest,
  LeaderAndIsrResponse,
} from '../../src/protocol/messages/04-leader-and-isr.js';
import type { StopReplicaRequest, StopReplicaResponse } from '../../src/protocol/messages/05-stop-replica.js';
import type {
  UpdateMetadataRequest,
  UpdateMetadataResponse,
} from '../../src/protocol/messages/06-update-metadata.js';

export type Sent =
  | { readonly broker: number; readonly kind: 'leaderAndIsr'; readonly request: LeaderAndIsrRequest }
  | { readonly broker: number; readonly kind: 'updateMetadata'; readonly request: UpdateMetadataRequest }
  | { readonly broker: number; readonly kind: 'stopReplica'; readonly request: StopReplicaRequest };

/** Records every request; answers success unless a broker is listed in `failing`. */
export class RecordingChannel implements BrokerChannel {
  readonly sent: Sent[] = [];
  readonly failing = new Set<number>();
  /** Brokers whose next n requests fail. */
  readonly failuresLeft = new Map<number, number>();

  private check(brokerId: number): void {
    const left = this.failuresLeft.get(brokerId) ?? 0;
    if (left > 0) {
      this.failuresLeft.set(brokerId, left - 1);
      throw new Error(`broker ${brokerId} dropped the connection`);
    }
    if (this.failing.has(brokerId)) throw new Error(`broker ${brokerId} is unreachable`);
  }

  async leaderAndIsr(brokerId: BrokerId, request: LeaderAndIsrRequest): Promise<LeaderAndIsrResponse> {
    this.sent.push({ broker: brokerId, kind: 'leaderAndIsr', request });
    this.check(brokerId);
    return { errorCode: ErrorCode.NONE, partitionErrors: [], topics: [] };
  }

  async updateMetadata(brokerId: BrokerId, request: UpdateMetadataRequest): Promise<UpdateMetadataResponse> {
    this.sent.push({ broker: brokerId, kind: 'updateMetadata', request });
    this.check(brokerId);
    return { errorCode: ErrorCode.NONE };
  }

  async stopReplica(brokerId: BrokerId, request: StopReplicaRequest): Promise<StopReplicaResponse> {
    this.sent.push({ broker: brokerId, kind: 'stopReplica', request });
    this.check(brokerId);
    return { errorCode: ErrorCode.NONE, partitionErrors: [] };
  }

  of<K extends Sent['kind']>(kind: K, broker?: number): Extract<Sent, { kind: K }>[] {
    return this.sent.filter(
      (s): s is Extract<Sent, { kind: K }> =>
        s.kind === kind && (broker === undefined || s.broker === broker),
    );
  }

  clear(): void {
    this.sent.length = 0;
  }

  /** The last partition state sent to `broker` in a LeaderAndIsr for topic-partition. */
  lastLeaderAndIsr(broker: number, topic: string, partition: number) {
    for (let i = this.sent.length - 1; i >= 0; i--) {
      const s = this.sent[i]!;
      if (s.kind !== 'leaderAndIsr' || s.broker !== broker) continue;
      for (const t of s.request.topicStates) {
        if (t.topicName !== topic) continue;
        const p = t.partitionStates.find((x) => x.partitionIndex === partition);
        if (p !== undefined) return p;
      }
    }
    return undefined;
  }
}

export function registration(id: number, rack: string | null = null): BrokerRegistration {
  return {
    brokerId: id as BrokerId,
    endpoints: [
      { listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', host: '127.0.0.1', port: 9000 + id },
    ],
    rack,
    jmxPort: -1,
    timestampMs: 1_700_000_000_000,
    features: {},
  };
}

export interface TestBroker {
  readonly id: number;
  readonly session: CoordinationStore;
}

/** A cluster of brokers on one in-memory store; broker i has its own session. */
export class TestCluster {
  readonly clock = new ManualClock();
  readonly store = InProcessStore.open({ dataDir: null, clock: this.clock });
  readonly brokers = new Map<number, TestBroker>();

  async addBroker(id: number, rack: string | null = null): Promise<TestBroker> {
    const session = this.store.openSession({ sessionTimeoutMs: 6000 });
    const registered = await registerBroker(session, registration(id, rack), seededRandom(id));
    if (!registered.ok) throw new Error(registered.reason);
    const broker = { id, session };
    this.brokers.set(id, broker);
    return broker;
  }

  /** Ends the broker's session, as a crash does once its session times out. */
  killBroker(id: number): void {
    const broker = this.brokers.get(id)!;
    this.store.expireSession(broker.session.sessionId);
    this.brokers.delete(id);
  }

  /** A session that belongs to no broker, for reading the store in assertions. */
  readonly observer = this.store.openSession();

  async partitionState(
    topic: string,
    partition: number,
  ): Promise<(PartitionState & { version: number }) | null> {
    const node = await this.observer.get(partitionStatePath(topic, partition as never));
    if (!node.ok) return null;
    const decoded = decodePartitionState(node.value.data);
    if (!decoded.ok) throw decoded.error;
    return { ...decoded.value, version: node.value.stat.version };
  }

  close(): void {
    this.store.close();
  }
}

export function startController(
  session: CoordinationStore,
  brokerId: number,
  channel: BrokerChannel,
  extra: { uncleanLeaderElectionEnable?: boolean; deleteTopicEnable?: boolean } = {},
): Controller {
  return new Controller({
    brokerId: brokerId as BrokerId,
    store: session,
    channel,
    random: seededRandom(brokerId + 100),
    ...extra,
  });
}

export function admin(session: CoordinationStore, controller?: Controller, seed = 7): TopicAdmin {
  // No broker metadata here: a change counts as done once the controller has acted on it.
  const propagation =
    controller === undefined
      ? undefined
      : {
          sync: (topics: readonly string[]) => controller.sync(topics),
          awaitChanges: async (changes: readonly { topic: string }[], timeoutMs: number) => {
            await controller.sync(
              changes.map((c) => c.topic),
              timeoutMs,
            );
            return new Set(changes.map((c) => c.topic));
          },
        };
  return new TopicAdmin({
    store: session,
    defaults: { numPartitions: 1, replicationFactor: 1, deleteTopicEnable: true },
    random: seededRandom(seed),
    ...(propagation === undefined ? {} : { propagation }),
  });
}

export function newTopic(
  name: string,
  numPartitions = -1,
  replicationFactor = -1,
  assignments: { partitionIndex: number; brokerIds: number[] }[] = [],
  configs: Record<string, string> = {},
) {
  return { name, numPartitions, replicationFactor, assignments, configs };
}

/** Lets queued microtasks and the controller's events run. */
export async function settle(controller: Controller): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    await controller.sync();
  }
}

/** One partition of an AlterPartition request. */
export function isrChange(
  partitionIndex: number,
  leaderEpoch: number,
  partitionEpoch: number,
  newIsr: number[],
) {
  return {
    partitionIndex,
    leaderEpoch,
    newIsr,
    newIsrWithEpochs: [],
    leaderRecoveryState: 0,
    partitionEpoch,
  };
}

/** A session whose owner never hears of watches or session events: a controller that is paused or partitioned. */
export class DeafSession implements CoordinationStore {
  constructor(private readonly inner: CoordinationStore) {}
  get sessionId() {
    return this.inner.sessionId;
  }
  get sessionTimeoutMs() {
    return this.inner.sessionTimeoutMs;
  }
  create(path: string, data: Uint8Array, mode?: Parameters<CoordinationStore['create']>[2]) {
    return this.inner.create(path, data, mode);
  }
  get(path: string): Promise<StoreResult<NodeData>> {
    return this.inner.get(path);
  }
  set(path: string, data: Uint8Array, version: number): Promise<StoreResult<Stat>> {
    return this.inner.set(path, data, version);
  }
  delete(path: string, version: number) {
    return this.inner.delete(path, version);
  }
  exists(path: string) {
    return this.inner.exists(path);
  }
  children(path: string) {
    return this.inner.children(path);
  }
  childrenWithStat(path: string) {
    return this.inner.childrenWithStat(path);
  }
  multi(ops: readonly Op[]): Promise<MultiResult> {
    return this.inner.multi(ops);
  }
  onSessionEvent(_listener: SessionListener): () => void {
    return () => {};
  }
  close() {
    return this.inner.close();
  }
}

/**
 * What a FaultySession does with one call: `lose` applies it and answers CONNECTIONLOSS (ZooKeeper's server
 * committed it, the link dropped before the reply), `fail` answers CONNECTIONLOSS without applying it.
 */
export type Fault = 'lose' | 'fail';

/**
 * A session whose calls can fail as over a flaky link to ZooKeeper: `multiFault` and `getFault` are asked before
 * each multi and get, and `emit` plays a session event (a `reconnected` after the link came back).
 */
export class FaultySession implements CoordinationStore {
  multiFault: (ops: readonly Op[]) => Fault | null = () => null;
  getFault: (path: string) => Fault | null = () => null;
  private readonly listeners = new Set<SessionListener>();

  constructor(private readonly inner: CoordinationStore) {
    inner.onSessionEvent((event) => {
      for (const l of this.listeners) l(event);
    });
  }
  get sessionId() {
    return this.inner.sessionId;
  }
  get sessionTimeoutMs() {
    return this.inner.sessionTimeoutMs;
  }
  create(path: string, data: Uint8Array, mode?: Parameters<CoordinationStore['create']>[2]) {
    return this.inner.create(path, data, mode);
  }
  async get(path: string, watcher?: Watcher): Promise<StoreResult<NodeData>> {
    const fault = this.getFault(path);
    if (fault === 'fail') return { ok: false, code: 'CONNECTIONLOSS', path };
    const result = await this.inner.get(path, watcher);
    return fault === 'lose' ? { ok: false, code: 'CONNECTIONLOSS', path } : result;
  }
  set(path: string, data: Uint8Array, version: number): Promise<StoreResult<Stat>> {
    return this.inner.set(path, data, version);
  }
  delete(path: string, version: number) {
    return this.inner.delete(path, version);
  }
  exists(path: string, watcher?: Watcher) {
    return this.inner.exists(path, watcher);
  }
  children(path: string, watcher?: Watcher) {
    return this.inner.children(path, watcher);
  }
  childrenWithStat(path: string, watcher?: Watcher) {
    return this.inner.childrenWithStat(path, watcher);
  }
  async multi(ops: readonly Op[]): Promise<MultiResult> {
    const fault = this.multiFault(ops);
    if (fault === 'fail') return { ok: false, code: 'CONNECTIONLOSS', failedOpIndex: 0 };
    const result = await this.inner.multi(ops);
    return fault === 'lose' ? { ok: false, code: 'CONNECTIONLOSS', failedOpIndex: 0 } : result;
  }
  onSessionEvent(listener: SessionListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  emit(event: SessionEvent): void {
    for (const l of this.listeners) l(event);
  }
  close() {
    return this.inner.close();
  }
}

/** Whether a multi writes the state znode of topic-partition. */
export function writesState(ops: readonly Op[], topic: string, partition: number): boolean {
  const path = partitionStatePath(topic, partition as never);
  return ops.some((op) => (op.op === 'set' || op.op === 'create') && op.path === path);
}

/**
 * The broker epoch the controller knows for a live broker, as its AlterPartition requests must carry (Kafka's
 * ZooKeeper-mode controller takes no -1 there); -1 when the controller is not active or the broker is not live.
 */
export function liveEpoch(controller: Controller, brokerId: number): bigint {
  const live = controller.context?.liveBrokers.get(brokerId as BrokerId);
  return live === undefined ? -1n : BigInt(live.epoch);
}
