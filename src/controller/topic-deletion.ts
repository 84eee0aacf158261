// Topic deletion (Kafka's TopicDeletionManager): the topics named under /admin/delete_topics are removed from the
// brokers' metadata, their replicas are stopped and deleted (StopReplica with deletePartitions), and once every
// replica is answered deleted, the topic's znodes go, the deletion marker with them. As in Kafka, the replicas that
// are online are deleted at once; one on a dead broker, or in a failed log directory, waits for its broker to come
// back (register again).
//
// Ownership: one TopicDeletionManager per Controller. Every method runs inside the controller's event queue (a
// StopReplica answer only enqueues an event). The progress of each deletion lives in the ControllerContext
// (`ctx.deletions`), so it is rebuilt at every failover like the rest of what the controller knows: a new
// controller starts every unfinished deletion again, which is safe because deleting a deleted replica is a no-op
// on the broker (UNKNOWN_TOPIC_OR_PARTITION counts as done).

import type { BrokerId, PartitionId } from '../common/ids.js';
import { ErrorCode } from '../protocol/errors.js';
import type { ControllerRequest, ControllerResponse } from './channel.js';
import { type ControllerContext, replicasOf, type TopicEntry, type TopicPartition } from './context.js';
import type { ControllerCore, Fenced } from './controller-core.js';
import { buildStopReplica, type RequestHeaderFields } from './requests.js';
import type { CoordinationStore, MultiResult, Op } from './store/store.js';
import { DELETE_TOPICS_PATH, deleteTopicPath, topicConfigPath, topicPath } from './zk-layout/index.js';

/** What topic deletion needs of its controller. */
export interface TopicDeletionHost {
  readonly core: ControllerCore;
  /** The header fields of the controller's requests to brokers. */
  readonly header: RequestHeaderFields;
  /** delete.topic.enable: when false, deletion markers are removed and the topics stay. */
  readonly deleteTopicEnable: boolean;
  /** The controller's current session. */
  store(): CoordinationStore;
  /** A write guarded by the controller epoch; `fenced` when another controller has taken over. */
  fencedMulti(ops: readonly Op[]): Promise<MultiResult | Fenced>;
  /** A guarded write found a newer controller: resign. */
  onFenced(): void;
  /** Runs `fn` as an event of the controller's queue (coalesced with queued events of the same key). */
  enqueue(name: string, fn: () => Promise<void>, key?: string): void;
  /** Sends a request to a broker through the controller's channel; `onAnswer` gets the response or null. */
  send(
    broker: BrokerId,
    request: ControllerRequest,
    onAnswer: (answer: ControllerResponse | null) => void,
  ): void;
  /** UpdateMetadata for `tps` to `brokers`, the topics in `deleted` sent as deleted (leader -2). */
  sendUpdateMetadata(
    brokers: readonly BrokerId[],
    tps: readonly TopicPartition[],
    deleted: ReadonlySet<string>,
  ): void;
  /** Reads the topic list again (a topic newer than the controller's view may be named for deletion). */
  readTopics(): Promise<void>;
  /** The topic and its znodes are gone: the controller forgets what it kept for it (its watcher). */
  topicDeleted(topic: string): void;
  /** The deletion of the topic began: its reassignments in flight will never finish (self-healing's among them). */
  deletionStarted(topic: string): void;
}

/** Queues the named topics for deletion (those already queued keep their progress). */
export function queueDeletions(ctx: ControllerContext, names: readonly string[]): void {
  for (const n of names) {
    if (!ctx.deletions.has(n))
      ctx.deletions.set(n, { started: false, awaiting: new Set(), deleted: new Set() });
  }
}

/** True when `broker` was sent StopReplica (delete) for its replica of `tp` since it last registered. */
export function replicaDeletionBegun(ctx: ControllerContext, tp: TopicPartition, broker: BrokerId): boolean {
  const progress = ctx.deletions.get(tp.topic);
  const key = replicaKey(broker, tp.partition);
  return progress !== undefined && (progress.awaiting.has(key) || progress.deleted.has(key));
}

export class TopicDeletionManager {
  constructor(private readonly host: TopicDeletionHost) {}

  /** The watcher of /admin/delete_topics. */
  readonly watch = (): void => {
    this.host.enqueue('topicDeletion', () => this.onDeletionsChanged(), 'topicDeletion');
  };

  /** /admin/delete_topics changed (or is looked at again): queue new markers, forget withdrawn ones. */
  async onDeletionsChanged(): Promise<void> {
    if (this.host.core.ctx === null) return;
    const names = await this.host.store().children(DELETE_TOPICS_PATH, this.watch);
    const ctx = this.host.core.ctx;
    if (!names.ok || ctx === null) return;
    const present = new Set(names.value);
    queueDeletions(ctx, names.value);
    for (const [n, progress] of ctx.deletions)
      if (!present.has(n) && !progress.started) ctx.deletions.delete(n);
    await this.processDeletions();
  }

  /** A broker was sent everything again after its queue overflowed: a StopReplica to it may have been refused. */
  async onBrokerResynced(broker: BrokerId): Promise<void> {
    const ctx = this.host.core.ctx;
    if (ctx === null) return;
    for (const progress of ctx.deletions.values()) forgetBroker(progress.awaiting, broker);
    await this.processDeletions();
  }

  /**
   * Brokers registered (again): each reopened its log directories (a failed one may be back), so its replicas of
   * topics being deleted are asked again, a no-op for those it had deleted already (as Kafka resumes a deletion at
   * a broker's startup). The caller then lets the deletions go round.
   */
  onBrokersStarted(brokers: readonly BrokerId[]): void {
    const ctx = this.host.core.ctx;
    if (ctx === null) return;
    for (const progress of ctx.deletions.values()) {
      for (const b of brokers) {
        forgetBroker(progress.awaiting, b);
        forgetBroker(progress.deleted, b);
      }
    }
  }

  /**
   * Moves every queued deletion as far as it can go: the topic is removed from the brokers' metadata (leader -2),
   * the online replicas are stopped and deleted, and once every replica, offline ones included, is answered
   * deleted, its znodes go.
   */
  async processDeletions(): Promise<void> {
    const host = this.host;
    const ctx = host.core.ctx;
    if (ctx === null) return;
    for (const [topic, progress] of [...ctx.deletions]) {
      if (host.core.ctx !== ctx) return;
      let entry = ctx.topics.get(topic);
      if (entry === undefined) {
        // The topic may be newer than the controller's view (its creation's watch event still queued): read
        // the topic list before concluding that there is nothing to delete.
        const exists = await host.store().exists(topicPath(topic));
        if (host.core.ctx !== ctx) return;
        if (exists.ok && exists.value !== null) {
          await host.readTopics();
          if (host.core.ctx !== ctx) return;
          entry = ctx.topics.get(topic);
          if (entry === undefined) continue;
        }
      }
      if (entry === undefined || !host.deleteTopicEnable) {
        if (entry !== undefined) host.core.logger.warn(`not deleting ${topic}: delete.topic.enable is false`);
        const removed = await host.fencedMulti([{ op: 'delete', path: deleteTopicPath(topic), version: -1 }]);
        if ('fenced' in removed) return host.onFenced();
        ctx.deletions.delete(topic);
        continue;
      }
      const tps = [...entry.partitions.keys()].map((p) => ({ topic, partition: p }));
      if (!progress.started) {
        // As Kafka's onTopicDeletion, the live brokers drop the topic from their metadata at once, a replica on a
        // dead broker or not: clients stop seeing it, and transaction coordinators skip its partitions' markers.
        progress.started = true;
        host.core.logger.info(`deleting topic ${topic}`);
        host.sendUpdateMetadata([...ctx.liveBrokers.keys()], tps, new Set([topic]));
        host.deletionStarted(topic);
      }
      const pending = replicasOfTopic(entry).filter(
        (r) => !progress.deleted.has(replicaKey(r.broker, r.partition)),
      );
      if (pending.length === 0) {
        await this.completeDeletion(topic);
        continue;
      }
      // As Kafka's onPartitionDeletion, the online replicas are stopped and deleted now; one on a dead broker or
      // in a failed log directory waits for its broker to register again (ReplicaDeletionIneligible): the znodes
      // stay until every replica is deleted, so a log in a failed directory does not outlive its topic.
      const online = (r: Replica) =>
        ctx.liveBrokers.has(r.broker) && !ctx.isReplicaOffline(r.broker, { topic, partition: r.partition });
      const waiting = pending.filter((r) => !online(r));
      const byBroker = new Map<BrokerId, TopicPartition[]>();
      for (const r of pending) {
        if (!online(r) || progress.awaiting.has(replicaKey(r.broker, r.partition))) continue;
        const list = byBroker.get(r.broker) ?? [];
        list.push({ topic, partition: r.partition });
        byBroker.set(r.broker, list);
      }
      if (waiting.length > 0 && byBroker.size > 0) {
        const names = waiting.map((r) => `${topic}-${r.partition} on broker ${r.broker}`);
        host.core.logger.info(`deletion of ${topic} waits for offline replicas [${names.join(', ')}]`);
      }
      for (const [b, hosted] of byBroker) {
        for (const tp of hosted) progress.awaiting.add(replicaKey(b, tp.partition));
        const request = buildStopReplica(ctx, host.header, b, hosted, true);
        host.send(b, { kind: 'stopReplica', request }, (answer) =>
          this.onStopReplicaAnswer(ctx, topic, b, hosted, answer),
        );
      }
    }
  }

  private onStopReplicaAnswer(
    ctx: ControllerContext,
    topic: string,
    broker: BrokerId,
    sent: readonly TopicPartition[],
    answer: ControllerResponse | null,
  ): void {
    this.host.enqueue(`stopReplicaAnswer ${topic} ${broker}`, async () => {
      if (this.host.core.ctx !== ctx) return;
      const progress = ctx.deletions.get(topic);
      const entry = ctx.topics.get(topic);
      if (progress === undefined || entry === undefined || !progress.started) return;
      // As Kafka's processTopicDeletionStopReplicaResponseReceived, no answer or a request error fails every
      // replica; else each goes by its partition's error (an unknown partition is one already deleted).
      const answered =
        answer !== null && answer.kind === 'stopReplica' && answer.response.errorCode === ErrorCode.NONE;
      const errors = new Map<PartitionId, number>();
      if (answered) {
        for (const e of answer.response.partitionErrors)
          if (e.topicName === topic) errors.set(e.partitionIndex as PartitionId, e.errorCode);
      }
      const failed: PartitionId[] = [];
      for (const tp of sent) {
        const key = replicaKey(broker, tp.partition);
        progress.awaiting.delete(key);
        const code = errors.get(tp.partition) ?? ErrorCode.NONE;
        if (answered && (code === ErrorCode.NONE || code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
          progress.deleted.add(key);
        else failed.push(tp.partition);
      }
      if (failed.length > 0) {
        // Asked again when the deletions next go round (a broker change, a resync, another deletion).
        this.host.core.logger.warn(
          `broker ${broker} failed to delete the replicas of ${topic} [${failed.join(',')}]; will retry`,
        );
        return;
      }
      if (replicasOfTopic(entry).every((r) => progress.deleted.has(replicaKey(r.broker, r.partition))))
        await this.completeDeletion(topic);
    });
  }

  private async completeDeletion(topic: string): Promise<void> {
    const host = this.host;
    const ctx = host.core.ctx;
    if (ctx === null) return;
    const paths = await subtree(host.store, topicPath(topic));
    const config = await host.store().exists(topicConfigPath(topic));
    const marker = await host.store().exists(deleteTopicPath(topic));
    const ops: Op[] = paths.map((path) => ({ op: 'delete', path, version: -1 }));
    if (config.ok && config.value !== null)
      ops.push({ op: 'delete', path: topicConfigPath(topic), version: -1 });
    if (marker.ok && marker.value !== null)
      ops.push({ op: 'delete', path: deleteTopicPath(topic), version: -1 });
    const result = await host.fencedMulti(ops);
    if ('fenced' in result) return host.onFenced();
    if (host.core.ctx !== ctx) return;
    if (!result.ok) {
      // Tried again when the deletions next go round: every replica is deleted, so that goes straight here.
      host.core.logger.warn(
        `removing the znodes of deleted topic ${topic} failed: ${result.code}; will retry`,
      );
      return;
    }
    ctx.removeTopic(topic);
    ctx.deletions.delete(topic);
    host.topicDeleted(topic);
    host.core.logger.info(`deleted topic ${topic}`);
  }
}

/** One replica of a topic: a partition and a broker holding it. */
interface Replica {
  readonly partition: PartitionId;
  readonly broker: BrokerId;
}

/** The replicas of a topic. */
function replicasOfTopic(entry: TopicEntry): Replica[] {
  return [...entry.partitions].flatMap(([partition, p]) =>
    replicasOf(p).map((broker) => ({ partition, broker })),
  );
}

/** The key of a replica in DeletionProgress: `<broker>/<partition>`. */
function replicaKey(broker: BrokerId, partition: PartitionId): string {
  return `${broker}/${partition}`;
}

/** Removes the keys of `broker`'s replicas from `keys`. */
function forgetBroker(keys: Set<string>, broker: BrokerId): void {
  for (const k of [...keys]) if (k.startsWith(`${broker}/`)) keys.delete(k);
}

/** Paths under and including `root`, deepest first. */
async function subtree(store: () => CoordinationStore, root: string): Promise<string[]> {
  const out: string[] = [];
  const visit = async (path: string): Promise<void> => {
    const children = await store().children(path);
    if (!children.ok) return;
    for (const c of children.value) await visit(`${path}/${c}`);
    out.push(path);
  };
  await visit(root);
  return out;
}
